import type { Kysely } from 'kysely';
import { sql } from 'kysely';

// Names and places the emails are made of: lower-case, as the app stores emails. First and
// last names are disjoint sets and hold no separator, so every email is unique (below).
const FIRST = [
  'alex',
  'maria',
  'ivan',
  'olga',
  'dmitry',
  'anna',
  'sergey',
  'elena',
  'nikita',
  'daria',
  'artem',
  'ksenia',
  'pavel',
  'irina',
  'maxim',
  'yulia',
  'roman',
  'natasha',
  'igor',
  'vika',
  'mohammad',
  'ali',
  'reza',
  'sara',
  'fatemeh',
  'hossein',
  'zahra',
  'amir',
  'neda',
  'mehdi',
  'parisa',
  'hamid',
  'leila',
  'omid',
  'shirin',
  'john',
  'emma',
  'david',
  'sophie',
  'james',
  'olivia',
  'michael',
  'lucas',
  'mia',
  'noah',
  'li',
  'wei',
  'chen',
  'yan',
  'jun',
  'mehmet',
  'ayse',
  'emre',
  'zeynep',
  'burak',
  'ahmed',
  'fatima',
  'omar',
  'layla',
  'yusuf',
  'tom',
  'kate',
  'max',
  'nina',
  'leo',
  'eva',
  'paul',
  'lena',
  'jan',
  'kai',
  'timur',
  'aigerim',
  'dias',
  'madina',
  'ruslan',
  'farid',
  'nodir',
  'dilnoza',
  'bekzod',
  'sanjar',
  'hana',
  'yuki',
  'kenji',
  'sora',
  'minh',
  'linh',
  'duc',
  'thao',
  'raj',
  'priya',
  'arjun',
  'kavya',
  'oleg',
  'denis',
  'vlad',
  'gleb',
  'zoe',
];
const LAST = [
  'petrov',
  'ivanova',
  'smirnov',
  'kuznetsov',
  'popov',
  'sokolova',
  'volkov',
  'morozova',
  'novikov',
  'fedorova',
  'orlov',
  'lebedev',
  'kozlova',
  'ahmadi',
  'hosseini',
  'karimi',
  'rezaei',
  'mohammadi',
  'moradi',
  'jafari',
  'rahimi',
  'sadeghi',
  'smith',
  'johnson',
  'brown',
  'miller',
  'wilson',
  'taylor',
  'anderson',
  'wang',
  'zhang',
  'liu',
  'huang',
  'yilmaz',
  'kaya',
  'demir',
  'celik',
  'sahin',
  'hassan',
  'khan',
  'ibrahim',
  'nguyen',
  'tran',
  'pham',
  'tanaka',
  'sato',
  'suzuki',
  'sharma',
  'patel',
  'gupta',
  'muller',
  'schmidt',
  'weber',
  'rossi',
  'bianchi',
  'garcia',
  'lopez',
  'martin',
  'bernard',
  'nazarov',
  'aliyev',
];
/** 100 slots, by share: a domain's count of slots is its share of the addresses. */
const DOMAINS = [
  ...Array<string>(34).fill('gmail.com'),
  ...Array<string>(12).fill('mail.ru'),
  ...Array<string>(8).fill('yahoo.com'),
  ...Array<string>(8).fill('proton.me'),
  ...Array<string>(8).fill('yandex.ru'),
  ...Array<string>(6).fill('outlook.com'),
  ...Array<string>(6).fill('icloud.com'),
  ...Array<string>(4).fill('hotmail.com'),
  ...Array<string>(4).fill('vpnshop.io'),
  ...Array<string>(4).fill('kitsune.dev'),
  ...Array<string>(3).fill('nordwind.net'),
  ...Array<string>(3).fill('example.org'),
];
/** What operators write in notes; NOTE_WORDS are the words the bench searches for. */
export const NOTE_WORDS = ['family', 'reseller', 'crypto', 'corporate', 'trial', 'student', 'refund', 'friend'];
const CLIENT_NOTES = [
  'family plan',
  'reseller: north region',
  'pays in crypto',
  'corporate account, invoice monthly',
  'trial extended once',
  'student discount',
  'refund requested in march',
  'friend of the owner',
  'vip, pays yearly',
  'asked for a second device',
];
const SUBSCRIPTION_NOTES = [
  'family: kids tablet',
  'reseller batch',
  'paid with crypto',
  'corporate laptop',
  'trial',
  'student, renews each term',
  'refund pending',
  'friend, free',
  'home router',
  'second phone',
];

const array = (xs: string[]) => sql.raw(`array[${xs.map((x) => `'${x.replaceAll("'", "''")}'`).join(', ')}]::text[]`);
/** An element of `xs` picked by a hash of `seed` (deterministic: the same row gets the same value every seed). */
const pick = (xs: string[], seed: ReturnType<typeof sql.raw> | ReturnType<typeof sql>) =>
  sql`(${array(xs)})[1 + abs(hashint4(${seed}) % ${sql.lit(xs.length)})]`;

/** Ids as the product makes them: `<prefix>_` + 26 characters, time-ordered (here: by i), the rest random-looking. */
const idSql = (prefix: string, i: ReturnType<typeof sql>) =>
  sql`${sql.lit(`${prefix}_`)} || lpad((${i})::text, 10, '0') || substr(md5(${sql.lit(prefix)} || (${i})), 1, 16)`;

/**
 * `clients` clients and `subscriptions` subscriptions, set-based in SQL, made to be searched:
 * emails `<first><sep><last><n>@<domain>` in four shapes (alex1234@, alex.petrov12@,
 * alex_petrov12@, petrov.alex12@) over 97 first names, 61 last names and 12 domains by share
 * (gmail.com a third, mail.ru, yahoo.com, proton.me, ... and four small custom domains). The
 * first name is client i mod 97 and the number i div 97, so no two emails are the same. A
 * fifth of clients and of subscriptions carry a note (10 kinds each: family, reseller, ...;
 * a client's note sometimes names a telegram handle). Subscriptions go to clients by a hash
 * (a few clients have none, some several); statuses as bench/subscriptions (70% active, 10%
 * each limited, expired, disabled); expiry: 15% never, expired ones in the last 60 days, the
 * others over the next year; this period's traffic skewed (most use little, some up to
 * 200 GiB); created over the last two years in id order. Ids are fixed-width and
 * time-ordered: `<prefix>_` + i in 10 digits + 16 hex characters (30 characters, as the
 * product's ids), so an id's first 12 characters match 100 neighbours as a real id's match
 * those made within the same second. Every row shares one sealed link token.
 */
export async function seed(db: Kysely<any>, sealedToken: string, clients: number, subscriptions: number): Promise<void> {
  const now = new Date();
  const i = sql`i`;
  // The first name is FIRST[i mod 97] (not hashed) and the number i div 97: unique emails.
  const firstName = sql`(${array(FIRST)})[1 + i % ${sql.lit(FIRST.length)}]`;
  const num = sql`(i / ${sql.lit(FIRST.length)})::text`;
  const last = pick(LAST, sql`i * 7 + 1`);
  const domain = pick(DOMAINS, sql`i * 13 + 5`);
  const local = sql`case abs(hashint4(i * 3 + 2)) % 4
      when 0 then ${firstName} || ${num}
      when 1 then ${firstName} || '.' || ${last} || ${num}
      when 2 then ${firstName} || '_' || ${last} || ${num}
      else ${last} || '.' || ${firstName} || ${num} end`;
  const clientNote = sql`case when abs(hashint4(i * 11 + 3)) % 100 < 20 then
      ${pick(CLIENT_NOTES, sql`i * 17 + 4`)} || case when abs(hashint4(i * 19 + 6)) % 3 = 0 then ', tg @' || ${firstName} || '_' || ${last} else '' end
    end`;
  await sql`
    insert into clients (id, email, status, note, email_verified_at, created_at, updated_at)
    select ${idSql('cli', i)}, ${local} || '@' || ${domain},
      case when abs(hashint4(i * 23 + 7)) % 100 < 95 then 'active' when abs(hashint4(i * 23 + 7)) % 100 < 98 then 'pending' else 'disabled' end,
      ${clientNote}, ${now}, ${now}::timestamptz - interval '730 days' + i * (interval '730 days' / ${sql.lit(clients)}), ${now}
    from generate_series(1, ${sql.lit(clients)}) as i`.execute(db);

  const client = sql`(1 + abs(hashint4(i * 29 + 8)) % ${sql.lit(clients)})`;
  const subscriptionNote = sql`case when abs(hashint4(i * 31 + 9)) % 100 < 20 then ${pick(SUBSCRIPTION_NOTES, sql`i * 37 + 10`)} end`;
  await sql`
    insert into subscriptions (id, client_id, status, traffic_limit_bytes, expires_at, renewal, period_started_at,
      vless_uuid, vmess_uuid, trojan_password, shadowsocks_password, token_hash, token_enc, note, created_at, updated_at)
    select ${idSql('sub', i)}, ${idSql('cli', client)}, status,
      case when h % 3 = 0 then null when h % 3 = 1 then 53687091200 else 107374182400 end,
      case when status = 'expired' then ${now}::timestamptz - (h % 60) * interval '1 day' - (h % 86400) * interval '1 second'
        when h % 100 < 15 then null
        else ${now}::timestamptz + (h % 365) * interval '1 day' + (h % 86399) * interval '1 second' end,
      'no_reset', ${now}, gen_random_uuid(), gen_random_uuid(), md5(i::text), md5((i * 31)::text),
      md5(i::text) || md5((i * 7)::text), ${sealedToken}, ${subscriptionNote},
      ${now}::timestamptz - interval '730 days' + i * (interval '730 days' / ${sql.lit(subscriptions)}), ${now}
    from (select i, abs(hashint4(i * 41 + 11)) as h,
            case when i % 10 < 7 then 'active' when i % 10 = 7 then 'limited' when i % 10 = 8 then 'expired' else 'disabled' end as status
          from generate_series(1, ${sql.lit(subscriptions)}) as i) as g`.execute(db);
  // Autovacuum would have visited tables this size; analyze gives the planner its statistics.
  // Traffic of this period, skewed (most use little): in the counters rows the insert's trigger added.
  await sql`update subscription_counters set used_bytes = floor(power(random(), 3) * 214748364800)::bigint`.execute(db);
  await sql`vacuum analyze clients`.execute(db);
  await sql`vacuum analyze subscriptions`.execute(db);
  await sql`vacuum analyze subscription_counters`.execute(db);
}
