/** Quotes, or backticks, around the whole of an ID typed as `demo` or "demo": not part of it. */
export function unquoted(word: string): string {
  let w = word;
  for (let m; (m = /^(?:`+([^`]*)`+|"(.*)"|'(.*)'|“(.*)”|‘(.*)’)$/su.exec(w)); ) {
    const inner = m.slice(1).find((g) => g !== undefined) ?? '';
    if (inner === w) break;
    w = inner.trim();
  }
  return w;
}
