/**
 * Two strings compared by UTF-16 code unit, as `sort()` without a comparator does: the same order
 * on every host, where `localeCompare` follows the host's locale (under th_TH `ab` comes before
 * `a_c`, under et_EE `zed` before `team`).
 */
export function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
