/**
 * How a proxy URL's scheme is read, for each client that reads one: the CLI's own client
 * (undici's ProxyAgent, as deepcode's hooks go), Claude Code's http hooks and deepagents' curl.
 */

/**
 * A proxy URL's scheme, lower case, or undefined for one written without (`proxy.corp:8080`, which
 * the clients that take it read as an http proxy): only a scheme before `://` counts, as
 * `proxy.corp:8080` would otherwise read as the scheme `proxy.corp`.
 */
export function proxyScheme(proxy: string): string | undefined {
  return /^([a-z][a-z0-9+.-]*):\/\//i.exec(proxy)?.[1]?.toLowerCase();
}

/**
 * The SOCKS version a proxy URL's scheme names to undici (the CLI's client, deepcode's): socks4://,
 * socks4a://, socks5://, socks5h://, and socks://, which names none, as SOCKS5; undefined for
 * another scheme or none. curl reads socks:// as SOCKS4 (7.88): a deepagents route's proxy is
 * handed on as socks4:// (`asCurlReadsIt`).
 */
export function socksVersion(proxy: string): 4 | 5 | undefined {
  switch (proxyScheme(proxy)) {
    case "socks4":
    case "socks4a":
      return 4;
    case "socks5":
    case "socks5h":
    case "socks":
      return 5;
    default:
      return undefined;
  }
}

/**
 * A proxy URL with the scheme curl reads in it written out for undici, which sends the CLI's
 * request on a deepagents route (agent-proxy.ts `proxyFor`): socks:// as socks4://, curl's SOCKS
 * version for it (7.88), where undici reads SOCKS5; any other as it is.
 */
export function asCurlReadsIt(proxy: string): string {
  return proxyScheme(proxy) === "socks" ? `socks4${proxy.slice("socks".length)}` : proxy;
}
