/**
 * Declarative settings of a "kind" of integration (payment providers, DNS providers): each
 * field is a string that is either public (stored and shown) or secret (sealed, never
 * shown). The input schemas check the envelope (an object of values); which names and values a
 * kind takes is checked here, against the kind: the one in the body on create, the stored one
 * on update, which no schema can know.
 */
export interface FieldSpec {
  /** Write-only: stored sealed with the installation key, never returned. */
  secret: boolean;
  /**
   * Public fields: must always be present. Secret fields of payment providers: must be set
   * before the provider can be enabled. Credentials of DNS providers: must be given.
   */
  required: boolean;
  description: string;
  /** The reason a (string) value is refused, or null when it is acceptable. */
  check: (value: string) => string | null;
}

export type FieldSpecs = Readonly<Record<string, FieldSpec>>;

/** A string field: trimmed-length bounds, optional prefix and pattern. */
export function stringField(opts: {
  secret: boolean;
  required: boolean;
  description: string;
  prefix?: string;
  pattern?: RegExp;
  patternReason?: string;
  max?: number;
}): FieldSpec {
  const max = opts.max ?? 1024;
  return {
    secret: opts.secret,
    required: opts.required,
    description: opts.description,
    check: (v) => {
      if (v.trim().length === 0) return 'must not be empty';
      if (v.length > max) return `must be at most ${max} characters`;
      if (opts.secret && /\s/.test(v)) return 'must not contain whitespace';
      if (opts.prefix && !v.startsWith(opts.prefix)) return `must start with ${opts.prefix}`;
      if (opts.pattern && !opts.pattern.test(v)) return opts.patternReason ?? `must match ${opts.pattern.source}`;
      return null;
    },
  };
}

/**
 * Checks given values against the fields of a kind. `null` means "remove" and is accepted
 * only when `allowNull` (merges); the caller decides what removing a required field means.
 * Returns per-field reasons keyed `<prefix><field>`.
 */
export function checkFields(
  specs: FieldSpecs,
  values: Record<string, unknown>,
  opts: { prefix: string; kind: string; allowNull: boolean },
): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const [name, value] of Object.entries(values)) {
    const spec = Object.hasOwn(specs, name) ? specs[name] : undefined;
    const key = `${opts.prefix}${name}`;
    if (!spec) {
      errors[key] = `not a setting of kind ${opts.kind} (known: ${Object.keys(specs).join(', ') || 'none'})`;
      continue;
    }
    if (value === null && opts.allowNull) continue;
    if (typeof value !== 'string') {
      errors[key] = 'must be a string';
      continue;
    }
    const reason = spec.check(value);
    if (reason) errors[key] = reason;
  }
  return errors;
}

export const secretFieldNames = (specs: FieldSpecs): string[] => Object.keys(specs).filter((k) => specs[k]?.secret);
export const publicFieldNames = (specs: FieldSpecs): string[] => Object.keys(specs).filter((k) => !specs[k]?.secret);
