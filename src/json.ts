/** Parses JSON text; undefined when it is not JSON (a corrupt Redis entry, a body that is not JSON). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
