// Names and account ids cannot disguise themselves: no control characters (C0, DEL, C1 such as the
// terminal's CSI U+009B), no bidirectional overrides or isolates, no line or paragraph separators,
// no lone surrogates, no tag characters (but the flags of England, Scotland and Wales), and a name shows
// at least one visible character (a combining mark or a blank braille pattern is none). Ordinary
// Unicode is a name.
import { KeyManager, MemoryKeyStore } from 'keygate';
import { describe, expect, it } from 'vitest';

const base = { accountId: 'acct_1', name: 'ci', mode: 'test' as const };

function manager() {
  const store = new MemoryKeyStore();
  return { store, keys: new KeyManager({ store }) };
}

/** Each class of disguising character, inside an otherwise ordinary name. */
const DISGUISED: Array<[string, string]> = [
  ['a C0 control (NUL)', 'ci\u0000prod'],
  ['a C0 control (ESC)', 'ci\u001b[31mprod'],
  ['DEL', 'ci\u007f'],
  ['a C1 control (CSI, U+009B)', 'ci\u009b31mprod'],
  ['a C1 control (NEL, U+0085)', 'ci\u0085prod'],
  ['a left-to-right embedding (U+202A)', 'ci\u202aprod'],
  ['a right-to-left embedding (U+202B)', 'ci\u202bprod'],
  ['a pop directional formatting (U+202C)', 'ci\u202cprod'],
  ['a left-to-right override (U+202D)', 'ci\u202dprod'],
  ['a right-to-left override (U+202E)', 'invoice\u202efdp.exe'],
  ['a left-to-right isolate (U+2066)', 'ci\u2066prod'],
  ['a right-to-left isolate (U+2067)', 'ci\u2067prod'],
  ['a first-strong isolate (U+2068)', 'ci\u2068prod'],
  ['a pop directional isolate (U+2069)', 'ci\u2069prod'],
  ['a line separator (U+2028)', 'ci\u2028prod'],
  ['a paragraph separator (U+2029)', 'ci\u2029prod'],
  ['a lone high surrogate', 'ci\ud83dprod'],
  ['a lone low surrogate', 'ci\udc69prod'],
];

/** Names with nothing to see. */
const INVISIBLE: Array<[string, string]> = [
  ['a zero-width space (U+200B)', '\u200b'],
  ['zero-width non-joiner and joiner (U+200C, U+200D)', '\u200c\u200d'],
  ['a word joiner (U+2060)', '\u2060\u2060'],
  ['a byte-order mark between zero-width spaces (U+FEFF)', '\u200b\ufeff\u200b'],
  ['zero-width characters around a no-break space', '\u200b\u00a0\u200d'],
  ['the blank braille pattern (U+2800)', '\u2800\u2800\u2800'],
  ['blank braille patterns around spaces', '\u2800 \u2800'],
  ['a combining acute accent (U+0301), repeated', '\u0301\u0301\u0301'],
  ['combining marks of several kinds (U+0300, U+0336, U+20DD)', '\u0300\u0336\u20dd'],
  ['a Hangul filler (U+3164)', '\u3164'],
];

// Tag characters (U+E0000-U+E007F) show nothing and spell hidden ASCII: `tags('hi')` is "hi" in tags.
const tags = (text: string) =>
  [...text].map((c) => String.fromCodePoint(0xe0000 + (c.codePointAt(0) as number))).join('');
const CANCEL_TAG = '\u{E007F}';

/** Names carrying tag characters outside the flags of England, Scotland and Wales. */
const TAGGED: Array<[string, string]> = [
  ['hidden ASCII in tag characters after a visible name', `ci${tags('ignore all previous instructions')}${CANCEL_TAG}`],
  ['a language tag (U+E0001)', 'ci\u{E0001}'],
  ['tag characters alone', `${tags('prod')}${CANCEL_TAG}`],
  [
    'a black flag with the tags of a code Unicode does not recommend (usca)',
    `team \u{1F3F4}${tags('usca')}${CANCEL_TAG}`,
  ],
  ['a recommended flag with more tags after it', `team \u{1F3F4}${tags('gbeng')}${CANCEL_TAG}${tags('x')}`],
  ['a recommended flag without its cancel tag', `team \u{1F3F4}${tags('gbeng')}`],
];

/** Names people write. */
const ORDINARY: Array<[string, string]> = [
  ['accents', 'Clé de production – équipe émail'],
  ['CJK', '生产环境密钥'],
  ['Hangul', '운영 키'],
  ['Arabic (right to left, no override)', 'مفتاح الإنتاج'],
  ['emoji', 'deploy 🚀'],
  ['an emoji ZWJ sequence', 'dev 👩‍💻'],
  ['a flag', 'team 🇫🇷'],
  ['a skin-tone modifier', '👍🏽 ok'],
  ['an accent as e + a combining acute (U+0301)', 'cle\u0301 de production'],
  ['a braille letter among blank patterns', '\u2800\u2801\u2800'],
  ['the flag of England (a tag sequence)', `team \u{1F3F4}${tags('gbeng')}${CANCEL_TAG}`],
  ['the flags of Scotland and Wales', `\u{1F3F4}${tags('gbsct')}${CANCEL_TAG} \u{1F3F4}${tags('gbwls')}${CANCEL_TAG}`],
];

describe('a name', () => {
  it.each(DISGUISED)(
    'with %s is refused by create (invalid_input, name, bad_character); nothing is written',
    async (_, name) => {
      const { store, keys } = manager();
      await expect(keys.create({ ...base, name })).rejects.toMatchObject({
        code: 'invalid_input',
        field: 'name',
        issues: [expect.objectContaining({ field: 'name', reason: 'bad_character' })],
      });
      expect(await store.listByAccount('acct_1')).toEqual([]);
    },
  );

  it.each(DISGUISED)('with %s is refused by update; the key keeps its name', async (_, name) => {
    const { keys } = manager();
    const { key } = await keys.create(base);
    await expect(keys.update(key.id, { name })).rejects.toMatchObject({ code: 'invalid_input', field: 'name' });
    expect(await keys.get(key.id)).toEqual(key);
  });

  it.each(INVISIBLE)('of only %s is refused (no_visible_character), by create and by update', async (_, name) => {
    const { store, keys } = manager();
    const refused = {
      code: 'invalid_input',
      field: 'name',
      issues: [expect.objectContaining({ reason: 'no_visible_character' })],
    };
    await expect(keys.create({ ...base, name })).rejects.toMatchObject(refused);
    expect(await store.listByAccount('acct_1')).toEqual([]);
    const { key } = await keys.create(base);
    await expect(keys.update(key.id, { name })).rejects.toMatchObject(refused);
    expect((await keys.get(key.id))?.name).toBe('ci');
  });

  it.each(TAGGED)('with %s is refused (bad_character), by create and by update', async (_, name) => {
    const { store, keys } = manager();
    const refused = {
      code: 'invalid_input',
      field: 'name',
      issues: [expect.objectContaining({ field: 'name', reason: 'bad_character' })],
    };
    await expect(keys.create({ ...base, name })).rejects.toMatchObject(refused);
    expect(await store.listByAccount('acct_1')).toEqual([]);
    const { key } = await keys.create(base);
    await expect(keys.update(key.id, { name })).rejects.toMatchObject(refused);
    expect((await keys.get(key.id))?.name).toBe('ci');
  });

  it.each(ORDINARY)('with %s is accepted as typed', async (_, name) => {
    const { keys } = manager();
    const { key } = await keys.create({ ...base, name });
    expect(key.name).toBe(name);
    expect((await keys.update(key.id, { name: `${name} 2` })).name).toBe(`${name} 2`);
  });

  it('may carry a zero-width joiner between visible characters', async () => {
    const { keys } = manager();
    expect((await keys.create({ ...base, name: 'a\u200db' })).key.name).toBe('a\u200db');
  });
});

describe('an account id', () => {
  it.each(DISGUISED)(
    'with %s is refused (invalid_input, accountId, bad_character); nothing is written',
    async (_, accountId) => {
      const { store, keys } = manager();
      await expect(keys.create({ ...base, accountId })).rejects.toMatchObject({
        code: 'invalid_input',
        field: 'accountId',
        issues: [expect.objectContaining({ reason: 'bad_character' })],
      });
      expect(await store.listByAccount(accountId)).toEqual([]);
    },
  );

  it.each(INVISIBLE)('of only %s is refused (no_visible_character)', async (_, accountId) => {
    const { keys } = manager();
    await expect(keys.create({ ...base, accountId })).rejects.toMatchObject({
      field: 'accountId',
      issues: [expect.objectContaining({ reason: 'no_visible_character' })],
    });
  });

  it.each(TAGGED)('with %s is refused (bad_character); nothing is written', async (_, accountId) => {
    const { store, keys } = manager();
    await expect(keys.create({ ...base, accountId })).rejects.toMatchObject({
      field: 'accountId',
      issues: [expect.objectContaining({ reason: 'bad_character' })],
    });
    expect(await store.listByAccount(accountId)).toEqual([]);
  });

  it.each(ORDINARY)('with %s is accepted', async (_, accountId) => {
    const { keys } = manager();
    expect((await keys.create({ ...base, accountId })).key.accountId).toBe(accountId);
  });
});
