import { createHash } from 'node:crypto';
import { KEY_SHAPE, generateKey, keyMatchesHash, prefixOf, secretsEqual } from '../../src/modules/keys/key-material.js';

describe('key material', () => {
  it('generates well-formed, distinct keys whose stored form is the SHA-256 hash', () => {
    const keys = Array.from({ length: 200 }, () => generateKey());
    expect(new Set(keys.map((k) => k.key)).size).toBe(200);
    for (const k of keys) {
      expect(k.key).toMatch(KEY_SHAPE);
      expect(k.prefix).toBe(prefixOf(k.key));
      expect(k.prefix).toHaveLength(12);
      expect(k.hash).toBe(createHash('sha256').update(k.key).digest('hex'));
    }
  });

  it('matches a key only against its own hash', () => {
    const a = generateKey();
    const b = generateKey();
    expect(keyMatchesHash(a.key, a.hash)).toBe(true);
    expect(keyMatchesHash(a.key, b.hash)).toBe(false);
    expect(keyMatchesHash(a.key, 'abc')).toBe(false);
  });

  it('compares secrets of any length', () => {
    expect(secretsEqual('admin-secret', 'admin-secret')).toBe(true);
    expect(secretsEqual('admin-secret', 'admin-secreT')).toBe(false);
    expect(secretsEqual('admin-secret', 'admin-secret-longer')).toBe(false);
  });
});
