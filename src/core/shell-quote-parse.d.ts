/** shell-quote's `parse` on its own (src/core/shell-command.ts), typed as the package types it. */
declare module "shell-quote/parse.js" {
  const parse: typeof import("shell-quote").parse;
  export default parse;
}
