import t from 'tap';
import { REDACTED, redactCredentials } from '../../../core/agent/credential-text.js';

t.test('credential-looking text is replaced, and the removal is reported', async (t) => {
  const cases: Array<[string, string]> = [
    ['use sk-proj-abcdefghijklmnop1234 here', `use ${REDACTED} here`],
    ['token ghp_abcdefghijklmnopqrstuvwxyz0123 found', `token ${REDACTED} found`],
    ['key AKIAABCDEFGHIJKLMNOP in the file', `key ${REDACTED} in the file`],
    ['AIzaSyA1234567890abcdefghijklmnopqrstu', REDACTED],
    ['slack xoxb-1234567890-abcdef', `slack ${REDACTED}`],
    ['Authorization: Bearer abcdefghijklmnop.qrstuv', `Authorization: Bearer ${REDACTED}`],
    ['jwt eyJhbGciOiJI.eyJzdWIiOiIx.SflKxwRJSMeK', `jwt ${REDACTED}`],
    ['api_key = "hunter2hunter2"', `api_key = "${REDACTED}"`],
    ['the PASSWORD: correcthorse!', `the PASSWORD: ${REDACTED}`],
    ['access_token=abcdefgh123', `access_token=${REDACTED}`],
    ['-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY----- done', `${REDACTED} done`],
  ];
  for (const [text, expected] of cases) {
    t.same(redactCredentials(text), { text: expected, removed: true }, text);
  }
});

t.test('ordinary text is left alone', async (t) => {
  for (const text of [
    'I should check the token bucket size first.',
    'The password field must be at least 8 characters.',
    'Sketch the plan: read notes, then answer.',
    'sk-short',
  ]) {
    t.same(redactCredentials(text), { text, removed: false }, text);
  }
});
