import { describe, expect, it } from 'vitest';
import { MissingPeerError, peerMissing } from './peers.ts';

describe('a missing peer', () => {
  it('with CI=true is an error naming the peer and why (a green CI proves every suite ran)', () => {
    expect(() => peerMissing('v2ray', 'v2ray not runnable', { CI: 'true' })).toThrow(MissingPeerError);
    expect(() => peerMissing('v2ray', 'v2ray not runnable', { CI: 'true' })).toThrow(/^v2ray is missing \(v2ray not runnable\)/);
  });

  it('elsewhere lets the suite skip (a developer without the peer still runs the rest)', () => {
    expect(() => peerMissing('v2ray', 'v2ray not runnable', {})).not.toThrow();
    expect(() => peerMissing('v2ray', 'v2ray not runnable', { CI: 'false' })).not.toThrow();
  });
});
