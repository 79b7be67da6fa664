import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NodeConfig } from '@svc/proto';
import { describe, expect, it } from 'vitest';
import { compileNodeConfig } from '../src/compile.ts';
import { chainNodes, everyTransportNode, userLimitsNode } from './fixtures.ts';

/**
 * Golden tests (issue 5): fixture model -> NodeConfig as proto3 JSON, compared with the file
 * under test/golden. `UPDATE_GOLDEN=1` rewrites the files; review the diff before committing.
 */
const dir = join(import.meta.dirname, 'golden');

function golden(name: string, config: NodeConfig) {
  const json = `${JSON.stringify(NodeConfig.toJSON(config), null, 2)}\n`;
  const file = join(dir, `${name}.json`);
  if (process.env.UPDATE_GOLDEN) writeFileSync(file, json);
  expect(existsSync(file), `${file} is missing: run with UPDATE_GOLDEN=1 and review it`).toBe(true);
  expect(json).toBe(readFileSync(file, 'utf8'));
}

describe('compiler golden files', () => {
  it('every protocol x transport x security on one node, users by the serving rule', () => {
    golden('every-transport', compileNodeConfig(everyTransportNode()));
  });

  it.each(['entry', 'middle', 'exit'])('chain of three hops: the %s hop', (hop) => {
    const index = ['entry', 'middle', 'exit'].indexOf(hop);
    golden(`chain-${hop}`, compileNodeConfig(chainNodes()[index] as ReturnType<typeof chainNodes>[number]));
  });

  it('user limits: one entry per serving subscription with a device limit, a cap, an expiry or a traffic limit (its slice), by id', () => {
    golden('user-limits', compileNodeConfig(userLimitsNode()));
  });
});
