import { GATEWAY } from '../../../../src/vendors/gateway/gateway.vendor.js';
import { GOOGLE, googleRefusal } from '../../../../src/vendors/google/google.vendor.js';
import { KLING } from '../../../../src/vendors/kling/kling.vendor.js';
import { LUMA } from '../../../../src/vendors/luma/luma.vendor.js';
import { MINIMAX } from '../../../../src/vendors/minimax/minimax.vendor.js';
import { RUNWAY, RUNWAY_VERSION } from '../../../../src/vendors/runway/runway.vendor.js';
import { SEEDANCE } from '../../../../src/vendors/seedance/seedance.vendor.js';
import { GATEWAY_VIDEO_PROTOCOL, VIDEO_VENDORS, videoCatalogOf, videoCatalogRange, videoVendorOf } from '../../../../src/vendors/video-vendors.js';
import { WAN } from '../../../../src/vendors/wan/wan.vendor.js';

describe('the video vendors’ descriptors and registry', () => {
  it('each adapter speaks its descriptor’s protocol, one adapter a protocol; a gateway channel speaks the Luma door', () => {
    expect(VIDEO_VENDORS.map((v) => v.protocol)).toEqual([LUMA, KLING, RUNWAY, MINIMAX, SEEDANCE, GOOGLE, WAN].map((d) => d.protocol));
    expect(GATEWAY_VIDEO_PROTOCOL).toBe('luma');
    expect(videoVendorOf('gateway')).toBe(videoVendorOf('luma'));
    expect(videoVendorOf('stability')).toBeUndefined();
    expect(videoCatalogOf('nobody')).toEqual([]);
    expect(videoCatalogOf('runway').map((m) => m.id)).toContain('gen4.5');
  });

  it('the range of what they make: every duration and shape of one protocol, or of all', () => {
    const runway = videoCatalogRange('runway');
    expect(runway.shapes).toContain('16:9@1080p');
    expect(runway.shapes).not.toContain('1:1@1080p');
    const all = videoCatalogRange();
    expect(all.durations).toEqual([...all.durations].sort((a, b) => a - b));
    expect(all.durations).toEqual(expect.arrayContaining([2, 5, 6, 8, 9, 10, 15]));
    expect(all.aspectRatios).toEqual(expect.arrayContaining(['16:9', '9:16', '1:1', '21:9']));
  });

  it('their probes: each a cheap authenticated read', () => {
    expect(KLING.probe(['video']).path).toBe('/v1/videos/text2video?pageNum=1&pageSize=1');
    expect(KLING.probe(['expand', 'video']).path).toMatch(/^\/v1\/images\/editing\/expand/);
    expect(KLING.probe(['image']).path).toMatch(/^\/v1\/images\/generations/);
    expect(() => KLING.probe(['video']).check!({ code: 1303, message: 'busy' })).not.toThrow();
    expect(() => KLING.probe(['video']).check!({ code: 1000, message: 'Authentication failed' })).toThrow('Authentication failed');
    expect(LUMA.probe([]).path).toBe('/credits');
    expect(RUNWAY.probe([]).headers).toEqual({ 'x-runway-version': RUNWAY_VERSION });
    expect(() => MINIMAX.probe([]).check!({ base_resp: { status_code: 1004, status_msg: 'not authorized' } })).toThrow('not authorized');
    expect(SEEDANCE.probe([]).path).toMatch(/^\/contents\/generations\/tasks\?/);
    expect(WAN.probe([]).refusal!(400, { code: 'Arrearage', message: 'overdue' })).toMatchObject({ kind: 'account' });
    expect(GOOGLE.probe([]).path).toBe('/models?pageSize=1');
  });

  it('a gateway channel is tested as the door its operation is', () => {
    expect(GATEWAY.probe(['expand'])).toMatchObject({ path: KLING.probe(['expand']).path });
    expect(GATEWAY.probe(['video'])).toMatchObject({ path: '/credits' });
    expect(GATEWAY.probe(['image'])).toEqual({ path: '/models', notFoundPasses: false });
    expect(GATEWAY.probe(['music']).path).not.toBe('/credits');
    expect(GATEWAY.auth({ api_key: 'k' }).headers()).toEqual({ authorization: 'Bearer k' });
  });

  it('their auth: Bearer keys, Google’s key header, none without credentials', async () => {
    expect(await RUNWAY.auth({ api_key: 'rk' }).headers()).toEqual({ authorization: 'Bearer rk' });
    expect(await GOOGLE.auth({ api_key: 'gk' }).headers()).toEqual({ 'x-goog-api-key': 'gk' });
    expect(await GOOGLE.auth({}).headers()).toEqual({});
    expect(await WAN.auth({}).headers()).toEqual({});
    expect(Object.keys(await KLING.auth({ access_key: 'a', secret_key: 's' }).headers())).toEqual(['authorization']);
  });

  it('Google’s refusals: a bad key, a place it does not serve, a free-tier key’s limit: 0; other 429s are busy', () => {
    expect(googleRefusal(400, { error: { code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT', details: [{ reason: 'API_KEY_INVALID' }] } })).toMatchObject({ kind: 'auth' });
    expect(googleRefusal(400, { error: { code: 400, message: 'User location is not supported for the API use.', status: 'FAILED_PRECONDITION' } })).toMatchObject({ kind: 'account' });
    expect(googleRefusal(429, { error: { code: 429, message: 'Quota exceeded, limit: 0', status: 'RESOURCE_EXHAUSTED' } })).toMatchObject({ kind: 'account' });
    expect(googleRefusal(429, { error: { code: 429, message: 'x', details: [{ violations: [{ quotaValue: '0' }] }] } })).toMatchObject({ kind: 'account' });
    expect(googleRefusal(429, { error: { code: 429, message: 'Resource has been exhausted', status: 'RESOURCE_EXHAUSTED' } })).toBeUndefined();
    expect(googleRefusal(404, {})).toBeUndefined();
  });
});
