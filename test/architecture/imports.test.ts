/**
 * The import rules of DESIGN.md: imports point inward, and only src/entry knows its runtime.
 * Reads every source file's import specifiers and checks them against the layer's allowance.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

function importsOf(text: string): string[] {
  const specifiers = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"/g)].map(
    (m) => m[1] ?? "",
  );
  const dynamic = [...text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g)].map((m) => m[1] ?? "");
  return [...specifiers, ...dynamic];
}

const files = sourceFiles(SRC).map((path) => {
  const rel = relative(SRC, path);
  // Comments may name what the code must not use; only code counts.
  const text = readFileSync(path, "utf8")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/^\s*\/\/.*$/gm, "");
  return { rel, layer: rel.split("/")[0] ?? "", text, imports: importsOf(text) };
});

// shell-quote/parse.js: the package's parse on its own, without the quote the Worker does not need.
const CORE_PACKAGES = new Set([
  "zod/mini",
  "re2js",
  "minimatch",
  "shell-quote",
  "shell-quote/parse.js",
  "ipaddr.js",
]);

/** The src-relative path a relative import points at. */
function resolveFrom(rel: string, spec: string): string {
  return join(rel, "..", spec).replaceAll("\\", "/");
}

/** A call of the global fetch, not a method named fetch (a Worker's exported `fetch(request, env)`). */
const FETCH_CALL = /(?:await|return|=>|[=(,!&|?:])\s*(?:globalThis\.)?fetch\(/;

/** Samples that must trip the fetch check, so the check itself is known to work. */
const FETCH_CALLS = ["await fetch(url)", "return fetch(u)", "const r = globalThis.fetch(u)", "x => fetch(u)"];

/** Only the egress adapters may speak to the network: no other file imports an HTTP client or socket API, or calls fetch. */
const NETWORK_MODULES = /^(undici|node:(net|tls|http|https|http2|dgram)|net|tls|http|https)$/;

/**
 * The CLI's client for a hookgate gateway (`hookgate send`, `hookgate doctor`). It is the client
 * side, posting to the gateway URL the user typed as an agent's hook would; it is not an
 * outbound call configured by a policy, so the egress guard has nothing to judge there.
 */
const CLIENT_SIDE = new Set([
  "adapters/gateway-client/node.ts",
  "adapters/gateway-client/proxied.ts",
  "adapters/gateway-client/socks4.ts",
]);

/**
 * The Node composition root creates the listening server (node:http `createServer`); it accepts
 * connections and never opens one. Every other use of node:http stays forbidden.
 */
const SERVER_SIDE = new Set(["entry/node.ts"]);

/**
 * The `--record` file writes a FIFO as Node writes a pipe, through node:net's Socket wrapped
 * around the descriptor it opened (a file stream's write to a FIFO nobody reads blocks a thread
 * that holds the process's exit). It takes only `Socket`, builds it only on a descriptor, and
 * connects nowhere.
 */
const LOCAL_PIPE = new Set(["adapters/record/jsonl.ts"]);

/**
 * What a network module holds that opens nothing, taken by name alone: node:net's address
 * arithmetic (a NO_PROXY range, an IPv6 address as inet_ntop writes it: entry/agent-proxy.ts) and
 * node:http's reason phrases (a status line written on a connection Node's parser refused:
 * entry/node-listener.ts).
 */
const OPENS_NOTHING: Readonly<Record<string, ReadonlySet<string>>> = {
  "node:net": new Set(["BlockList", "SocketAddress", "isIP", "isIPv4", "isIPv6"]),
  "node:http": new Set(["STATUS_CODES"]),
};

/** The values an import clause takes (`{ a, type B, c as d }`: a, c), or undefined for a default or a namespace. */
function importedValues(clause: string): string[] | undefined {
  const named = /^\{([^}]*)\}$/.exec(clause.trim())?.[1];
  if (named === undefined) return undefined;
  return named
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "" && !part.startsWith("type "))
    .map((part) => part.split(/\s+as\s+/)[0] ?? part);
}

describe("architecture", () => {
  it("finds the source files it checks", () => {
    expect(files.length).toBeGreaterThan(20);
    expect(files.some((f) => f.rel === "core/policy.ts" && f.imports.includes("zod/mini"))).toBe(true);
  });

  it.each(files.filter((f) => f.layer === "core"))(
    "$rel imports only core and pure libraries",
    ({ rel, imports, text }) => {
      for (const spec of imports) {
        const inCore = spec.startsWith(".") && resolveFrom(rel, spec).startsWith("core/");
        expect(inCore || CORE_PACKAGES.has(spec), `core imports ${spec}`).toBe(true);
      }
      expect(text).not.toMatch(/\bDate\.now\(|\bMath\.random\(|\bfetch\(|\bprocess\./);
    },
  );

  it.each(files.filter((f) => f.layer === "app"))("app/$rel imports only core and app", ({ imports }) => {
    for (const spec of imports) expect(spec.startsWith("../core/") || spec.startsWith("./"), spec).toBe(true);
  });

  it.each(files.filter((f) => f.layer === "http"))(
    "http/$rel imports only hono, app and core",
    ({ imports }) => {
      for (const spec of imports) {
        const ok =
          spec === "hono" ||
          spec.startsWith("hono/") ||
          /^\.\.\/(core|app)\//.test(spec) ||
          spec.startsWith("./");
        expect(ok, spec).toBe(true);
      }
    },
  );

  it.each(files.filter((f) => f.layer === "adapters"))(
    "adapters/$rel never imports http or entry",
    ({ imports }) => {
      for (const spec of imports) expect(spec, spec).not.toMatch(/\/(http|entry)\//);
    },
  );

  it.each(files.filter((f) => !f.rel.startsWith("adapters/egress/") && !CLIENT_SIDE.has(f.rel)))(
    "$rel opens no connection of its own",
    ({ rel, text }) => {
      if (SERVER_SIDE.has(rel)) {
        // The listening server is the one value it may take from node:http.
        expect(text).toMatch(/import \{ createServer \} from "node:http";/);
        text = text.replace(/import \{ createServer \} from "node:http";/, "");
      }
      if (LOCAL_PIPE.has(rel)) {
        expect(text).toMatch(/import \{ Socket \} from "node:net";/);
        for (const made of text.matchAll(/new Socket\(([^)]*)\)/g)) expect(made[1]).toMatch(/^\{ fd,/);
        expect(text).not.toMatch(/\.connect\(|createConnection/);
        text = text.replace(/import \{ Socket \} from "node:net";/, "");
      }
      // Type-only imports (the listening address's type) carry no code, nor does what opens nothing.
      for (const [, clause = "", spec = ""] of text.matchAll(
        /(?:^|\n)\s*import\s+(?!type\s)([^;]*?)\s*from\s+"([^"]+)"/g,
      )) {
        const values = importedValues(clause);
        const harmless = OPENS_NOTHING[spec];
        if (values !== undefined && harmless !== undefined && values.every((name) => harmless.has(name)))
          continue;
        expect(NETWORK_MODULES.test(spec), `${rel} imports ${spec}`).toBe(false);
      }
      expect(text, `${rel} calls fetch`).not.toMatch(FETCH_CALL);
    },
  );

  // The egress README tells a reader where outbound connections come from: each file the check
  // above lets connect out past the guard is named there.
  it("names in the egress README each file outside it that connects out", () => {
    const readme = readFileSync(join(SRC, "adapters/egress/README.md"), "utf8");
    for (const rel of CLIENT_SIDE) expect(readme, rel).toContain(rel.slice(rel.lastIndexOf("/") + 1));
  });

  it("lets only src/entry use the gateway client", () => {
    for (const f of files) {
      for (const spec of f.imports.filter((s) => s.includes("gateway-client/")))
        expect(f.layer, `${f.rel} imports ${spec}`).toBe("entry");
    }
  });

  it("sees an undici import where there is one", () => {
    expect(files.some((f) => f.rel === "adapters/egress/undici.ts" && f.imports.includes("undici"))).toBe(
      true,
    );
  });

  it.each(FETCH_CALLS)("recognises %j as a fetch call", (code) => {
    expect(code).toMatch(FETCH_CALL);
  });

  it("uses only zod/mini, never the classic zod entry, anywhere in src", () => {
    for (const f of files)
      expect(
        f.imports.filter((s) => s === "zod" || s.startsWith("zod/v")),
        f.rel,
      ).toEqual([]);
  });

  it("keeps the policy compiler and zod out of serve's delivery thread", () => {
    // What the thread loads at run time: value imports, re-exports and dynamic imports, followed
    // from its module (type-only imports carry no code).
    const byRel = new Map(files.map((f) => [f.rel, f]));
    const loaded = new Set<string>();
    const packages = new Set<string>();
    const visit = (rel: string) => {
      const file = byRel.get(rel);
      if (!file || loaded.has(rel)) return;
      loaded.add(rel);
      const specs = [
        ...[...file.text.matchAll(/(?:^|\n)\s*(?:import|export)\s+(?!type\s)[^;]*?from\s+"([^"]+)"/g)],
        ...[...file.text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g)],
      ].map((m) => m[1] ?? "");
      for (const spec of specs) {
        if (spec.startsWith(".")) visit(resolveFrom(rel, spec).replace(/\.js$/, ".ts"));
        else packages.add(spec);
      }
    };
    visit("entry/delivery-thread.ts");
    // The walk reaches what the thread does load, so the check below can fail.
    expect(loaded).toContain("app/deliver.ts");
    expect(loaded).toContain("adapters/egress/undici.ts");
    expect(loaded).not.toContain("core/policy.ts");
    expect(loaded).not.toContain("core/policy-schema.ts");
    expect([...packages].filter((p) => p.startsWith("zod"))).toEqual([]);
  });

  it("keeps a README in every top-level folder of src", () => {
    for (const layer of ["core", "app", "http", "adapters", "entry"]) {
      expect(() => readFileSync(join(SRC, layer, "README.md"), "utf8")).not.toThrow();
    }
  });

  it("names every source file of a top-level folder of src in its README", () => {
    const unnamed: string[] = [];
    for (const layer of ["core", "app", "http", "adapters", "entry"]) {
      const readme = readFileSync(join(SRC, layer, "README.md"), "utf8");
      for (const path of sourceFiles(join(SRC, layer))) {
        const name = path.slice(path.lastIndexOf("/") + 1);
        if (!readme.includes(`\`${name}\``) && !readme.includes(relative(join(SRC, layer), path))) {
          unnamed.push(relative(SRC, path));
        }
      }
    }
    expect(unnamed).toEqual([]);
  });

  it("has README's Development section name every folder of test", () => {
    const readme = readFileSync(join(SRC, "../README.md"), "utf8");
    const development = readme.slice(readme.indexOf("## Development"));
    const folders = readdirSync(join(SRC, "../test"), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(folders.filter((name) => !development.includes(`\`${name}\``))).toEqual([]);
  });
});
