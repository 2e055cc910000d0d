/** Words of a vendor's failure that say its moderation refused the request (Luma's, Kling's risk control, Stability's). */
const CONTENT_WORDS = /moderat|flagged|not allowed|inappropriate|restricted|risk control|sensitive|safety|nsfw|content polic|violat/i;

/**
 * Whether a vendor's failure reason is a content refusal (which does not fail over unless
 * RELAY_FAILOVER_ON_CONTENT), rather than a failure of the vendor's own (which does).
 */
export function isContentRefusal(words: string): boolean {
  return CONTENT_WORDS.test(words);
}
