import { adminWithRole, setupOwner, type TestServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

/**
 * POST /api/v1/settings/subscription-link/preview: the settings' User-Agent tester (issue 30.4).
 * It answers with the decision GET /sub/{token} makes (the same domain function), under the saved
 * rules or rules being edited, and saves nothing.
 */
let s: TestServer;
let owner: string;
let viewer: string;
beforeAll(async () => {
  s = await startAdminApi();
  owner = (await setupOwner(s)).access_token;
  viewer = (await adminWithRole(s, owner, 'viewer')).access_token;
});
afterAll(() => s.stop());

const preview = (body: unknown, token = viewer) => s.api.post('/api/v1/settings/subscription-link/preview', body, { token });

describe('the User-Agent tester', () => {
  it('names the saved rule that matches, the browser page, or the fallback list', async () => {
    expect((await preview({ user_agent: 'clash-verge/v2.2.3' })).body).toEqual({ format: 'clash-meta', rule_index: 0, reason: 'rule' });
    expect((await preview({ user_agent: 'SFA/1.11.4' })).body).toEqual({ format: 'sing-box', rule_index: 1, reason: 'rule' });
    expect((await preview({ user_agent: 'Mozilla/5.0 (X11)', accept: 'text/html,application/xhtml+xml' })).body).toEqual({
      format: 'html',
      rule_index: null,
      reason: 'browser',
    });
    expect((await preview({ user_agent: 'curl/8.5.0' })).body).toEqual({ format: 'base64', rule_index: null, reason: 'fallback' });
  });

  it('tries rules being edited without saving them', async () => {
    const draft = [{ user_agent: '^curl/', format: 'xray-json' }];
    expect((await preview({ user_agent: 'curl/8.5.0', format_rules: draft })).body).toEqual({
      format: 'xray-json',
      rule_index: 0,
      reason: 'rule',
    });
    const saved = await s.api.get('/api/v1/settings/subscription-link', { token: owner });
    expect(saved.body.format_rules).not.toContainEqual(draft[0]);
  });

  it('refuses a pattern a save would refuse (backtracking) and an oversized User-Agent, with the field named', async () => {
    const bad = await preview({ user_agent: 'x', format_rules: [{ user_agent: '(a)\\1', format: 'base64' }] });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.errors).some((k) => k.startsWith('format_rules'))).toBe(true);
    const long = await preview({ user_agent: 'a'.repeat(2049) });
    expect(long.status).toBe(400);
    expect(long.body.errors).toHaveProperty('user_agent');
  });

  it('needs an admin token', async () => {
    expect((await s.api.post('/api/v1/settings/subscription-link/preview', { user_agent: 'x' })).status).toBe(401);
  });
});
