import {
  DEFAULT_SUB_LINK_SETTINGS,
  type DomainContext,
  getSubLinkSettings,
  parseInput,
  SUB_LINK_SETTINGS_KEY,
  TOPICS,
  UpdateSubLinkSettingsInput,
  updateSubLinkSettings,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actorOf, anOwner } from '../admins/an-owner.ts';
import { refusal } from '../support.ts';

let bed: DomainTestbed;
let asOwner: DomainContext;
beforeAll(async () => {
  bed = await createDomainTestbed();
  ({ asOwner } = await anOwner(bed));
});
afterAll(() => bed.close());

const update = (patch: Record<string, unknown>) => updateSubLinkSettings(asOwner, parseInput(UpdateSubLinkSettingsInput, patch));
const refused = (patch: Record<string, unknown>): Record<string, string> => {
  try {
    parseInput(UpdateSubLinkSettingsInput, patch);
  } catch (err) {
    return (err as { errors: Record<string, string> }).errors;
  }
  throw new Error(`accepted ${JSON.stringify(patch)}`);
};

describe('subscription-link settings', () => {
  it('are the defaults until first changed; a patch merges, and format_rules replaces the whole list', async () => {
    expect(await getSubLinkSettings(bed.deps)).toEqual(DEFAULT_SUB_LINK_SETTINGS);
    const rules = [{ user_agent: '^MyXrayApp/', format: 'xray-json' as const }];
    const first = await update({ format_rules: rules, title: 'Acme VPN', update_interval_hours: 6 });
    expect(first).toEqual({ ...DEFAULT_SUB_LINK_SETTINGS, format_rules: rules, title: 'Acme VPN', update_interval_hours: 6 });
    const second = await update({ support_url: 'https://t.me/acme_support', title: null });
    expect(second).toEqual({ ...first, support_url: 'https://t.me/acme_support', title: null });
    expect(await getSubLinkSettings(bed.deps)).toEqual(second);
  });

  it('a change is audited with the fields it set, and announced on settings.changed after commit', async () => {
    await update({ update_interval_hours: 24, web_page_url: null });
    const entry = await bed.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'settings.updated')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(entry).toMatchObject({ entity_type: 'settings', entity_id: SUB_LINK_SETTINGS_KEY, actor_type: 'admin' });
    expect(entry.details).toEqual({ fields: ['update_interval_hours', 'web_page_url'] });
    expect(bed.published(TOPICS.settingsChanged)).toContainEqual({ key: SUB_LINK_SETTINGS_KEY });
  });

  it('the input rules: patterns that compile, formats we render, at most 50 rules, a title that is not blank, 1 to 168 whole hours, http(s) URLs', () => {
    expect(Object.keys(refused({ format_rules: [{ user_agent: '^(unclosed', format: 'base64' }] }))).toEqual(['format_rules.0.user_agent']);
    expect(Object.keys(refused({ format_rules: [{ user_agent: '', format: 'base64' }] }))).toEqual(['format_rules.0.user_agent']);
    expect(Object.keys(refused({ format_rules: [{ user_agent: 'x', format: 'clash' }] }))).toEqual(['format_rules.0.format']);
    expect(Object.keys(refused({ format_rules: [{ user_agent: 'x', format: 'base64', extra: 1 }] }))).toEqual(['format_rules.0']);
    expect(refused({ format_rules: Array.from({ length: 51 }, () => ({ user_agent: 'x', format: 'base64' })) })).toEqual({
      format_rules: 'at most 50 rules',
    });
    for (const title of ['', '   ', 't'.repeat(101)]) expect(Object.keys(refused({ title }))).toEqual(['title']);
    for (const hours of [0, 169, 1.5])
      expect(refused({ update_interval_hours: hours })).toEqual({ update_interval_hours: 'a whole number of hours from 1 to 168' });
    for (const url of ['ftp://x', 'http:x', 'https://a b.example', `https://${'a'.repeat(500)}.example`])
      expect(Object.keys(refused({ support_url: url }))).toEqual(['support_url']);
    expect(Object.keys(refused({ colour: 'red' }))).toEqual(['(body)']);
  });
});

describe("installation settings are the owner's (spec 5.4)", () => {
  it('an admin (or a viewer, or an owner demoted meanwhile) is refused and nothing changes; the shell may', async () => {
    const before = await getSubLinkSettings(bed.deps);
    for (const role of ['admin', 'viewer'] as const) {
      const who = await fixtures(bed.system()).admin({ role });
      const err = await refusal(
        updateSubLinkSettings(bed.ctx(actorOf(who)), parseInput(UpdateSubLinkSettingsInput, { title: `by ${role}` })),
      );
      expect(err.type).toBe('forbidden');
    }
    expect(await getSubLinkSettings(bed.deps)).toEqual(before);
    const changed = await updateSubLinkSettings(bed.system(), parseInput(UpdateSubLinkSettingsInput, { title: 'by the shell' }));
    expect(changed.title).toBe('by the shell');
  });
});
