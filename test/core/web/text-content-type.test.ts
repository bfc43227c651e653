import t from 'tap';
import { textContent } from '../../../core/web/text-content-type.js';

t.test('text types are read, named with the charset they are decoded as', async (t) => {
  const cases: Array<[string, string]> = [
    ['text/html; charset=utf-8', 'text/html; charset=utf-8'],
    ['text/plain', 'text/plain; charset=utf-8'],
    ['TEXT/CSV', 'text/csv; charset=utf-8'],
    ['application/json', 'application/json; charset=utf-8'],
    ['application/xml', 'application/xml; charset=utf-8'],
    ['application/xhtml+xml', 'application/xhtml+xml; charset=utf-8'],
    ['application/javascript', 'application/javascript; charset=utf-8'],
    ['application/ld+json', 'application/ld+json; charset=utf-8'],
    ['image/svg+xml', 'image/svg+xml; charset=utf-8'],
    ['text/plain; charset="ISO-8859-1"', 'text/plain; charset=windows-1252'],
    ['text/plain; format=flowed; Charset=Shift_JIS', 'text/plain; charset=shift_jis'],
    ['text/plain; charset=no-such-encoding', 'text/plain; charset=utf-8'],
    ['text/plain; charset', 'text/plain; charset=utf-8'],
  ];
  for (const [header, contentType] of cases) t.equal(textContent(header)?.contentType, contentType, header);
});

t.test('anything else, or no content type, is not text', async (t) => {
  const cases = [
    undefined,
    '',
    'application/octet-stream',
    'image/png',
    'application/pdf',
    'application/jsonx',
    'video/mp4; charset=utf-8',
    'text',
    'text/',
    `text/${'a'.repeat(200)}`,
    'text/html<script>',
  ];
  for (const header of cases) t.equal(textContent(header), null, String(header));
});

t.test('the decoder follows the charset', async (t) => {
  const latin = textContent('text/plain; charset=iso-8859-1');
  t.equal(latin?.decoder.decode(Uint8Array.of(0x63, 0x61, 0x66, 0xe9)), 'café');
  const utf8 = textContent('text/plain');
  t.equal(utf8?.decoder.decode(Uint8Array.of(0x61, 0xff, 0x62)), 'a\uFFFDb', 'invalid bytes are replaced');
});
