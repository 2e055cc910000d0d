import { jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { SealingKeys } from '../../src/infra/crypto/sealing-keys.js';
import { ChannelSecrets } from '../../src/modules/channels/channel-secrets.js';

describe('ChannelSecrets: a sealed value opened once, its credentials kept by its sealed bytes', () => {
  const keys = new SealingKeys(randomBytes(32), [], 'a test key');

  it('opens a value the same each time, each caller getting a copy of its own', () => {
    const secrets = new ChannelSecrets(keys);
    const sealed = secrets.seal({ access_key: 'ak-one', secret_key: 'sk-one' });
    const opens = jest.spyOn(keys, 'open');
    const first = secrets.open(sealed);
    first.secret_key = 'changed by a caller';
    expect(secrets.open(sealed)).toEqual({ access_key: 'ak-one', secret_key: 'sk-one' });
    // the same bytes at another offset of a larger buffer are the same value
    const within = new Uint8Array(sealed.byteLength + 8);
    within.set(sealed, 8);
    expect(secrets.open(within.subarray(8))).toEqual({ access_key: 'ak-one', secret_key: 'sk-one' });
    expect(opens).toHaveBeenCalledTimes(1); // decrypted once
    opens.mockRestore();
  });

  it('opens a changed value anew, and still refuses one no key of its opens', () => {
    const secrets = new ChannelSecrets(keys);
    expect(secrets.open(secrets.seal({ api_key: 'sk-old' }))).toEqual({ api_key: 'sk-old' });
    expect(secrets.open(secrets.seal({ api_key: 'sk-new' }))).toEqual({ api_key: 'sk-new' });
    const foreign = new ChannelSecrets(new SealingKeys(randomBytes(32), [], 'another key')).seal({ api_key: 'sk-x' });
    expect(() => secrets.open(foreign)).toThrow();
    expect(() => secrets.open(foreign)).toThrow(); // a refusal is not kept as an answer
  });
});
