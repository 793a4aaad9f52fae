/** A value built on first use (once per Lambda container or Worker isolate); a failed build is forgotten and tried again. */
export function once<T>(build: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => {
    if (!value) {
      const building = build();
      value = building;
      building.catch(() => {
        if (value === building) value = undefined;
      });
    }
    return value;
  };
}
