import { ControlPlaneWireDefinition, type ServerMessage } from '@svc/proto';
import { describe, expect, it } from 'vitest';
import { type Compressed, type Compressor, compressedBytes } from './cached-gzip.ts';
import { preEncoded, preEncodedSends } from './pre-encoded.ts';

/** A compressor that records what it was asked and answers with a marker. */
function recording() {
  const calls: Array<{ length: number; level: number }> = [];
  const compress: Compressor = (bytes, _encoding, level, done) => {
    calls.push({ length: bytes.length, level });
    done(null, Buffer.from(`deflated ${bytes.length}`));
  };
  return { calls, compress };
}
const compressed = (c: Compressor, bytes: Uint8Array, level: number, encoding = 'gzip') =>
  new Promise<Buffer>((resolve, reject) =>
    c(Buffer.from(bytes), encoding, level, (err, out) => (err || !out ? reject(err) : resolve(compressedBytes(out)))),
  );

describe('pre-encoded sends (a big node’s DesiredState encoded before the send)', () => {
  const message: ServerMessage = { desiredState: { revision: 7n, config: undefined } };
  const bytes = Buffer.from(ControlPlaneWireDefinition.sync.responseSerialize({ desiredState: { revision: 7n, config: undefined } }));

  it('the serializer sends the made bytes as they are, and encodes any other message', () => {
    const pre = preEncodedSends();
    const def = pre.definition(ControlPlaneWireDefinition);
    const made = Buffer.from('made elsewhere');
    expect(Buffer.from(def.sync.responseSerialize(preEncoded({ ...message }, { bytes: made }))).equals(made)).toBe(true);
    expect(Buffer.from(def.sync.responseSerialize({ clock: { nowMs: 1n } }))).toEqual(
      Buffer.from(ControlPlaneWireDefinition.sync.responseSerialize({ clock: { nowMs: 1n } })),
    );
  });

  it('a gzip kept at the send’s level is sent as it is (nothing deflated); at another level the bytes are deflated and the message told', async () => {
    const pre = preEncodedSends();
    const def = pre.definition(ControlPlaneWireDefinition);
    const { calls, compress } = recording();
    const c = pre.compressor(compress);
    const kept = Buffer.from('kept gzip');
    const told: Array<{ level: number; gzipped: string }> = [];
    const encoded = {
      bytes,
      gzip: { level: 1, bytes: kept },
      compressed: (level: number, gzipped: Compressed) => told.push({ level, gzipped: compressedBytes(gzipped).toString() }),
    };

    def.sync.responseSerialize(preEncoded({ ...message }, encoded));
    expect((await compressed(c, bytes, 1)).equals(kept)).toBe(true);
    expect(calls).toEqual([]);

    def.sync.responseSerialize(preEncoded({ ...message }, encoded));
    expect((await compressed(c, bytes, 6)).toString()).toBe(`deflated ${bytes.length}`);
    expect(calls).toEqual([{ length: bytes.length, level: 6 }]);
    expect(told).toEqual([{ level: 6, gzipped: `deflated ${bytes.length}` }]);
  });

  it('a message serialized in an earlier task, or of another length, is deflated as any other', async () => {
    const pre = preEncodedSends();
    const def = pre.definition(ControlPlaneWireDefinition);
    const { calls, compress } = recording();
    const c = pre.compressor(compress);
    const encoded = { bytes, gzip: { level: 1, bytes: Buffer.from('kept gzip') } };
    def.sync.responseSerialize(preEncoded({ ...message }, encoded));
    await new Promise((r) => setImmediate(r));
    await compressed(c, bytes, 1);
    def.sync.responseSerialize(preEncoded({ ...message }, encoded));
    await compressed(c, Buffer.concat([bytes, Buffer.from('x')]), 1);
    expect(calls).toHaveLength(2);
  });
});
