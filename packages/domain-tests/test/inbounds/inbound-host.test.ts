import { CreateInboundInput } from '@svc/domain';
import { describe, expect, it } from 'vitest';
import { fileTestbed, inputErrors } from '../support.ts';

const t = fileTestbed();

describe("an inbound's host follows the same rule and normal form as a node's address", () => {
  it.each([
    ['Edge.Example.COM.', 'edge.example.com'],
    ['[2001:DB8::1]', '2001:db8::1'],
    ['203.0.113.7', '203.0.113.7'],
  ])('%s is stored as %s', async (given, stored) => {
    expect((await t.f.inbound({ host: given })).host).toBe(stored);
  });

  it.each(['1.2.3', 'https://edge.example.com', 'edge.example.com:443'])('%s is refused naming the host', (given) => {
    expect(inputErrors(CreateInboundInput, { node_id: 'nod_x', profile_id: 'ipr_x', port: 1234, host: given })).toHaveProperty('host');
  });
});
