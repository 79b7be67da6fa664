import { CreateNodeInput, createNode, parseInput } from '@svc/domain';
import { TEST_OWNER, uniqueName } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { auditOf, fileTestbed, inputErrors, refusal } from '../support.ts';

const t = fileTestbed();

const create = (input: Record<string, unknown>) => createNode(t.bed.ctx(), parseInput(CreateNodeInput, input));

describe('createNode', () => {
  it('a new node starts enabled and offline at revision 1, with nothing applied or reported yet', async () => {
    const node = await create({ name: ' fra-1 ', address: 'FRA-1.Example.NET.' });
    expect(node).toMatchObject({
      name: 'fra-1',
      address: 'fra-1.example.net',
      admin_status: 'enabled',
      connectivity: 'offline',
      desired_revision: 1,
      applied_revision: 0,
      last_apply_error: null,
      last_seen_at: null,
      agent_version: null,
      xray_version: null,
      hostname: null,
      os: null,
      arch: null,
      status: null,
      enroll_token_expires_at: null,
      created_at: t.bed.clock.now().toISOString(),
      updated_at: t.bed.clock.now().toISOString(),
    });
    expect(node.id).toMatch(/^nod_[0-9a-z]{26}$/);
  });

  it('an address is an IPv4 or IPv6 literal (stored without brackets, lower case) or a DNS name', async () => {
    expect((await t.f.node({ address: '203.0.113.7' })).address).toBe('203.0.113.7');
    expect((await t.f.node({ address: '2001:DB8::1' })).address).toBe('2001:db8::1');
    expect((await t.f.node({ address: '[2001:db8::2]' })).address).toBe('2001:db8::2');
    expect((await t.f.node({ address: 'localhost' })).address).toBe('localhost');
  });

  it('refuses names that are blank or too long and addresses that are neither a DNS name nor an IP, naming the field', () => {
    for (const name of ['', '   ', 'x'.repeat(65)])
      expect(inputErrors(CreateNodeInput, { name, address: 'ok.example.net' }), name).toHaveProperty('name');
    for (const address of [
      '',
      'https://node.example.net',
      'node.example.net:443',
      'node example.net',
      '-bad.example.net',
      'bad-.example.net',
      'a..b',
      '999.1.1.1',
      '1.2.3',
      '[203.0.113.1]',
      `${'a'.repeat(64)}.example.net`,
      'node_1.example.net',
      '2001:db8::zz',
    ])
      expect(inputErrors(CreateNodeInput, { name: 'ok', address }), address).toHaveProperty('address');
    expect(Object.keys(inputErrors(CreateNodeInput, {})).sort()).toEqual(['address', 'name']);
  });

  it('a taken name is a conflict naming the field', async () => {
    const a = await t.f.node();
    const err = await refusal(create({ name: a.name, address: 'other.example.net' }));
    expect(err).toMatchObject({ type: 'conflict', errors: { name: 'already taken' } });
  });

  it('creating a node is audited with its name and address, by the acting admin', async () => {
    const node = await create({ name: uniqueName('audited'), address: '198.51.100.9' });
    const audit = await auditOf(t.bed, node.id);
    expect(audit.map((a) => a.action)).toEqual(['node.created']);
    expect(audit[0]).toMatchObject({ actor_type: 'admin', actor_id: TEST_OWNER.id, entity_type: 'node' });
    expect(audit[0]?.details).toEqual({ name: node.name, address: '198.51.100.9' });
  });
});
