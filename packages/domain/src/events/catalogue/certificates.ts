import { z } from 'zod';

const subject = { certificate_id: z.string(), name: z.string().nullable(), domains: z.array(z.string()) };

/** Certificates (docs/events.md, "Certificates"; docs/certificates.md). */
export const CERTIFICATE_EVENTS = {
  'certificate.expiring': z
    .object({ ...subject, not_after: z.string(), days_left: z.number().int() })
    .meta({ description: 'An uploaded certificate expires within 14 days (once per certificate material).' }),
  'certificate.issued': z.object({ ...subject, not_after: z.string(), renewal: z.boolean() }).meta({
    description:
      'An ACME certificate was issued or renewed; the nodes serving it get the new material (node.certificate_served, per node).',
  }),
  'certificate.issue_failed': z
    .object({ ...subject, error: z.string(), failed_attempts: z.number().int(), serving_until: z.string().nullable() })
    .meta({
      description:
        'An ACME issuance or renewal failed; tried again after a backoff. A failed renewal leaves the old material serving until serving_until.',
    }),
} as const;
