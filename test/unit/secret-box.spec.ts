import { parseSecretKey, SecretBox } from '../../src/infra/crypto/secret-box.js';
import { ConfigError, loadConfig } from '../../src/infra/config/app-config.js';

describe('SecretBox (AES-256-GCM) and CHANNEL_SECRET_KEY', () => {
  const key = Buffer.alloc(32, 7);

  it('opens what it sealed; the sealed bytes do not hold the plain text; each seal differs (random IV)', () => {
    const box = new SecretBox(key);
    const sealed = box.seal('{"api_key":"sk-very-secret-value"}');
    expect(sealed.includes(Buffer.from('sk-very-secret-value'))).toBe(false);
    expect(box.open(sealed)).toBe('{"api_key":"sk-very-secret-value"}');
    expect(box.seal('x').equals(box.seal('x'))).toBe(false);
  });

  it('refuses a value altered by one bit, or sealed under another key', () => {
    const sealed = new SecretBox(key).seal('secret');
    const altered = Buffer.from(sealed);
    altered[altered.length - 1] ^= 1;
    expect(() => new SecretBox(key).open(altered)).toThrow();
    expect(() => new SecretBox(Buffer.alloc(32, 8)).open(sealed)).toThrow();
    expect(() => new SecretBox(key).open(sealed.subarray(0, 20))).toThrow(/too short/);
  });

  it('reads a key as 64 hex digits or base64 of 32 bytes, nothing else', () => {
    expect(parseSecretKey('ab'.repeat(32))?.length).toBe(32);
    expect(parseSecretKey(Buffer.alloc(32, 1).toString('base64'))?.length).toBe(32);
    expect(parseSecretKey('ab'.repeat(31))).toBeNull();
    expect(parseSecretKey('ab'.repeat(33))).toBeNull();
    expect(parseSecretKey(Buffer.alloc(31, 1).toString('base64'))).toBeNull();
    expect(parseSecretKey('not a key')).toBeNull();
    expect(loadConfig({ CHANNEL_SECRET_KEY: 'cd'.repeat(32) }, '/srv').sealing.key?.length).toBe(32);
    expect(() => loadConfig({ CHANNEL_SECRET_KEY: 'short' }, '/srv')).toThrow(ConfigError);
    expect(() => loadConfig({ CHANNEL_SECRET_KEY: 'short' }, '/srv')).toThrow(/CHANNEL_SECRET_KEY must be 32 bytes/);
  });
});
