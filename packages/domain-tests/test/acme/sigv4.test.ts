import { amzDate, type SigV4Key, sigV4, sigV4Headers } from '@svc/providers';
import { describe, expect, it } from 'vitest';

// AWS Signature Version 4 against the AWS SigV4 test suite (aws-sig-v4-test-suite): the example
// key, the 2015-08-30 12:36:00 date and the `service` service in us-east-1. If the published
// signatures come out, the canonical request, the key derivation and the final HMAC are right.
const KEY: SigV4Key = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  region: 'us-east-1',
  service: 'service',
};
const HEADERS = { Host: 'example.amazonaws.com', 'X-Amz-Date': '20150830T123600Z' };
const SCOPE = 'AKIDEXAMPLE/20150830/us-east-1/service/aws4_request';

describe('SigV4 (the AWS test suite)', () => {
  it('get-vanilla: the canonical request, the string to sign and the signature are the published ones', () => {
    const s = sigV4({ method: 'GET', url: new URL('https://example.amazonaws.com/'), headers: HEADERS, body: '' }, KEY);
    expect(s.canonicalRequest).toBe(
      'GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n' +
        'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
    expect(s.stringToSign).toBe(
      'AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n' +
        'bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63',
    );
    expect(s.authorization).toBe(
      `AWS4-HMAC-SHA256 Credential=${SCOPE}, SignedHeaders=host;x-amz-date, ` +
        'Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
    );
  });

  it('get-vanilla-query-order-key-case: query parameters are sorted before signing', () => {
    const url = new URL('https://example.amazonaws.com/?Param2=value2&Param1=value1');
    const s = sigV4({ method: 'GET', url, headers: HEADERS, body: '' }, KEY);
    expect(s.canonicalRequest.split('\n')[2]).toBe('Param1=value1&Param2=value2');
    expect(s.signature).toBe('b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500');
  });

  it('post-vanilla: a POST without a body', () => {
    const s = sigV4({ method: 'POST', url: new URL('https://example.amazonaws.com/'), headers: HEADERS, body: '' }, KEY);
    expect(s.signature).toBe('5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b');
  });

  it('headers for a request at a time: x-amz-date from the clock, the host signed as the URL names it', () => {
    const at = new Date('2015-08-30T12:36:00.123Z');
    expect(amzDate(at)).toBe('20150830T123600Z');
    const h = sigV4Headers('GET', new URL('https://example.amazonaws.com/'), '', {}, KEY, at);
    expect(h['x-amz-date']).toBe('20150830T123600Z');
    expect(h.authorization).toMatch(/Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31$/);
    expect(h).not.toHaveProperty('host');
  });

  it('a date header missing or malformed is refused rather than signed', () => {
    expect(() => sigV4({ method: 'GET', url: new URL('https://example.amazonaws.com/'), headers: { host: 'x' }, body: '' }, KEY)).toThrow(
      /x-amz-date/,
    );
  });
});
