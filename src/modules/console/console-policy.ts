/**
 * The headers of every answer under /console. The Content-Security-Policy allows only the console's own
 * files (no inline script or style, nothing from a CDN: it works offline), its own API (connect-src 'self'),
 * and media from `mediaOrigins` besides itself: PUBLIC_BASE_URL's origin (result links use it) and the
 * bucket's when MEDIA_DELIVERY=redirect sends /media to presigned URLs.
 */
export function consoleSecurityHeaders(mediaOrigins: readonly string[]): Record<string, string> {
  const media = [...new Set(mediaOrigins)].join(' ');
  const csp = [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' data: blob:${media ? ` ${media}` : ''}`,
    `media-src 'self' blob:${media ? ` ${media}` : ''}`,
    "connect-src 'self'",
    "object-src 'none'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; ');
  return {
    'content-security-policy': csp,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
  };
}

/** The origin of an http(s) URL, or undefined for anything else. */
export function originOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.origin : undefined;
  } catch {
    return undefined;
  }
}
