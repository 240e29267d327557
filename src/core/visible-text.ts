/** A character that shows: not a space, control, format or default-ignorable one, nor the braille blank. */
const VISIBLE = /[^\s\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\u2800]/u;

/**
 * Whether `text` has anything to read. Spaces, controls, format characters (zero-width space,
 * word joiner) and the blank letters people paste to send an "empty" message (Hangul fillers,
 * braille blank) ask nothing: sent on, each would be a billed call for no question.
 */
export function hasVisibleText(text: string): boolean {
  return VISIBLE.test(text);
}
