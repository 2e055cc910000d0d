/** Names of the OpenAPI security schemes (Swagger UI's Authorize dialog lists the API key's first). */
export const API_KEY_SCHEME = 'api-key';
export const ADMIN_KEY_SCHEME = 'operator-admin-key';
/** The Prometheus scraper's token (METRICS_TOKEN), for GET /metrics only. */
export const METRICS_TOKEN_SCHEME = 'operator-metrics-token';
/** An API key in the `xi-api-key` header, as ElevenLabs' SDKs send it: ElevenLabs' door only. */
export const ELEVENLABS_KEY_SCHEME = 'elevenlabs-xi-api-key';
