import { CreateCertificateInput, CreateNodeInput } from '@svc/domain';
import { describe, expect, it } from 'vitest';
import { inputErrors } from '../support.ts';

/**
 * Issue 29.5, the class beyond emails: a name whose rule is ASCII (a host name, a DNS name to
 * issue a certificate for) is checked as given, lower-cased in its ASCII letters only, so a
 * character that String#toLowerCase folds onto ASCII (U+212A KELVIN SIGN -> "k") is refused
 * instead of becoming another name it only looks like.
 */
const KELVIN = '\u212A';

describe('ASCII names are not folded onto their lookalikes', () => {
  it('a node address with a Kelvin sign is refused; the same address in capitals is lower-cased', () => {
    expect(inputErrors(CreateNodeInput, { name: 'n', address: `${KELVIN}ey.example.com` })).toHaveProperty('address');
    expect(inputErrors(CreateNodeInput, { name: 'n', address: 'KEY.Example.COM' })).toEqual({});
  });

  it('an ACME certificate name with a Kelvin sign is refused; capitals are lower-cased', () => {
    const acme = (domains: string[]) => ({ kind: 'acme', acme_account_id: 'acc_01', dns_provider_id: 'dnp_01', domains });
    expect(inputErrors(CreateCertificateInput, acme([`${KELVIN}ey.example.com`]))).toHaveProperty(['domains.0']);
    expect(inputErrors(CreateCertificateInput, acme(['*.Example.COM']))).toEqual({});
  });
});
