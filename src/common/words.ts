/** A word with its indefinite article, as a message says it: `an openai`, `a kling`, `an image`. */
export function withArticle(word: string): string {
  return `${/^[aeiou]/i.test(word) ? 'an' : 'a'} ${word}`;
}
