import {
  CreateAdminInput,
  CreateClientInput,
  Email,
  MagicLinkRequestInput,
  NewPassword,
  PasswordLoginInput,
  parseInput,
  RegisterInput,
  ResetAdminPasswordInput,
  SetupInput,
  UpdateAdminInput,
} from '@svc/domain';
import { MALFORMED_EMAILS } from '@svc/testkit/hostile-text';
import { describe, expect, it } from 'vitest';
import { inputErrors } from '../support.ts';

describe('one email rule for every surface', () => {
  it('trims and lower-cases, so an address is stored and compared one way', () => {
    expect(Email.parse('  Ops@Example.COM ')).toBe('ops@example.com');
    expect(parseInput(CreateAdminInput, { email: 'Ops@Example.com', role: 'admin' }).email).toBe('ops@example.com');
  });

  it('refuses what is not an address, a one-letter top-level domain, and more than 254 characters', () => {
    for (const email of ['not-an-email', 'ops@example.c', 'two@at@example.com', `${'a'.repeat(250)}@example.com`]) {
      expect(inputErrors(PasswordLoginInput, { email, password: 'x' }), email).toHaveProperty('email');
    }
    expect(inputErrors(SetupInput, { token: 't', email: `${'a'.repeat(250)}@example.com`, password: 'password-1' })).toEqual({
      email: 'must be at most 254 characters',
    });
  });

  it('checks the address before lower-casing: the Kelvin sign (U+212A, which lower-cases to k) and every other non-ASCII letter are refused, never folded onto an ASCII address', () => {
    for (const email of ['\u212Aarol@example.com', 'carol@\u212Aexample.com', '\u0130nci@example.com', 'ｍallory@example.com']) {
      expect(Email.safeParse(email).success, email).toBe(false);
      const surfaces: Array<[Parameters<typeof parseInput>[0], Record<string, unknown>]> = [
        [RegisterInput, { password: 'a long password' }],
        [MagicLinkRequestInput, {}],
        [CreateClientInput, {}],
        [CreateAdminInput, { role: 'viewer' }],
      ];
      for (const [schema, rest] of surfaces)
        expect(inputErrors(schema, { ...rest, email }), email).toEqual({ email: 'must be an email address' });
    }
    expect(Email.parse('KAROL@EXAMPLE.COM')).toBe('karol@example.com');
  });

  it('takes exactly one address: markup, header lines, lists, display names, spaces, quotes and address literals are refused', () => {
    for (const email of MALFORMED_EMAILS) {
      expect(Email.safeParse(email).success, JSON.stringify(email)).toBe(false);
      expect(inputErrors(RegisterInput, { email, password: 'a long password' }), JSON.stringify(email)).toHaveProperty('email');
    }
  });

  it("a client's email follows the same rule", () => {
    expect(parseInput(CreateClientInput, { email: ' A@Example.com' }).email).toBe('a@example.com');
    expect(inputErrors(CreateClientInput, { email: 'ops@example.c' })).toEqual({ email: 'must be an email address' });
  });
});

describe('one password policy (8-1024 characters) wherever a password is set', () => {
  it('refuses a password under 8 or over 1024 characters, naming the field', () => {
    const cases: Array<[Parameters<typeof parseInput>[0], Record<string, unknown>]> = [
      [CreateAdminInput, { email: 'a@example.com', role: 'admin' }],
      [UpdateAdminInput, {}],
      [ResetAdminPasswordInput, { email: 'a@example.com' }],
      [SetupInput, { token: 't', email: 'a@example.com' }],
    ];
    for (const [schema, rest] of cases) {
      expect(inputErrors(schema, { ...rest, password: 'short' })).toEqual({ password: 'must be at least 8 characters' });
      expect(inputErrors(schema, { ...rest, password: 'x'.repeat(1025) })).toEqual({ password: 'must be at most 1024 characters' });
      expect(inputErrors(schema, { ...rest, password: 'eight-ch' })).toEqual({});
    }
    expect(NewPassword.safeParse('1234567').success).toBe(false);
    expect(inputErrors(CreateClientInput, { email: 'c@example.com', password: 'short' })).toEqual({
      password: 'must be at least 8 characters',
    });
  });

  it('sign-in takes any non-empty password up to 1024 characters: a stricter policy never locks anyone out', () => {
    expect(inputErrors(PasswordLoginInput, { email: 'a@example.com', password: 'short' })).toEqual({});
    expect(inputErrors(PasswordLoginInput, { email: 'a@example.com', password: '' })).toHaveProperty('password');
    expect(inputErrors(PasswordLoginInput, { email: 'a@example.com', password: 'x'.repeat(1025) })).toHaveProperty('password');
  });
});

describe('admin inputs', () => {
  it('a role is owner, admin or viewer', () => {
    expect(inputErrors(CreateAdminInput, { email: 'a@example.com', role: 'god' })).toHaveProperty('role');
    expect(inputErrors(UpdateAdminInput, { role: 'root' })).toHaveProperty('role');
  });

  it('an update takes null to remove the password and refuses unknown fields', () => {
    expect(parseInput(UpdateAdminInput, { password: null }).password).toBeNull();
    expect(inputErrors(UpdateAdminInput, { rolee: 'admin' })).toHaveProperty(['(body)']);
    expect(inputErrors(ResetAdminPasswordInput, { email: 'a@example.com', password: 'password-1', role: 'owner' })).toHaveProperty([
      '(body)',
    ]);
  });
});
