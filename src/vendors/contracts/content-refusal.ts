/**
 * The words vendors use when their moderation refused what was asked (Luma's "moderation", Kling's "risk
 * control", Veo's "violate … usage guidelines", an aggregator's "inappropriate"): every vendor's refusals may say
 * them, whatever codes of its own it adds.
 */
export const CONTENT_WORDS = /moderat|flagged|not allowed|inappropriate|restricted|risk control|sensitive|safety|nsfw|content polic|violat/i;

/**
 * How one vendor's content refusals look (its descriptor's `contentRefusal`): its own codes, as its adapters put
 * them in a failure's words ("(code 1301)", "(SAFETY.INPUT.TEXT)", "(moderation_blocked)"), or the words every
 * vendor uses.
 */
export function contentRefusals(codes?: RegExp): RegExp {
  return codes ? new RegExp(`${codes.source}|${CONTENT_WORDS.source}`, 'i') : CONTENT_WORDS;
}
