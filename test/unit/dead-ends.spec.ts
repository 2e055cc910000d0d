import { ACCOUNT_REFUSED, deadEndOf, deadEndWords } from '../../src/modules/channels/channel-routing.js';

/** Why no enabled channel can make a task, read from a disabled channel, and what its owner reads of it. */
describe('dead ends: a task no enabled channel can make', () => {
  it("reads the cause from a channel's status and status_reason, as autoDisable writes them", () => {
    expect(deadEndOf({ status: 'auto_disabled', statusReason: `${ACCOUNT_REFUSED.auth}: Incorrect API key provided` })).toBe('auth');
    expect(deadEndOf({ status: 'auto_disabled', statusReason: `${ACCOUNT_REFUSED.account}: You exceeded your current quota` })).toBe('account');
    // an auto-disabled channel is one whose account was refused: without words, its credentials
    expect(deadEndOf({ status: 'auto_disabled', statusReason: null })).toBe('auth');
    expect(deadEndOf({ status: 'disabled', statusReason: 'disabled by an admin' })).toBe('disabled');
    expect(deadEndOf({ status: 'disabled', statusReason: 'no longer configured: its RELAY_<OP>_URL is not set' })).toBe('disabled');
  });

  it('words each cause for the caller, naming the operation and what the task is called, and what to do', () => {
    expect(deadEndWords('image', 'task', 'auth')).toBe(
      "the image vendor refused the gateway's credentials, so its channel was disabled and no other channel can make this task; its credits were given back: the gateway's operators must renew the vendor's key before it is submitted again",
    );
    expect(deadEndWords('video', 'generation', 'account')).toBe(
      "the video vendor's account is out of credit, so its channel was disabled and no other channel can make this generation; its credits were given back: the gateway's operators must top the account up before it is submitted again",
    );
    expect(deadEndWords('expand', 'task', 'disabled')).toBe("every channel that can make this task is disabled by the gateway's operators; its credits were given back: submit it again once they enable one");
    expect(deadEndWords('music', 'music task', 'none')).toBe('no channel of the gateway can make this music task as asked; its credits were given back');
  });

  it('says when the vendor refused the account while it held the task, rather than before taking it', () => {
    expect(deadEndWords('video', 'generation', 'auth', true)).toBe(
      "the video vendor refused the gateway's credentials while it held this generation, so its channel was disabled; its credits were given back: the gateway's operators must renew the vendor's key before it is submitted again",
    );
    expect(deadEndWords('audio', 'upload', 'account', true)).toMatch(/^the audio vendor's account is out of credit \(it said so while it held this upload\), so its channel was disabled; /);
  });
});
