/** One code space for a string column over several tables: each distinct value once, `remaps[k][code in table k]`. */
export interface UnifiedStrings {
  readonly values: string[];
  readonly remaps: Int32Array[];
}

/** `lists[k]`: the distinct values table k's codes index. */
export function unifyStrings(lists: readonly (readonly string[])[]): UnifiedStrings {
  const values: string[] = [];
  const codeOf = new Map<string, number>();
  const remaps = lists.map((strings) => {
    const remap = new Int32Array(strings.length);
    for (let k = 0; k < strings.length; k++) {
      const s = strings[k]!;
      let code = codeOf.get(s);
      if (code === undefined) codeOf.set(s, (code = values.push(s) - 1));
      remap[k] = code;
    }
    return remap;
  });
  return { values, remaps };
}
