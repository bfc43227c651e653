import t from 'tap';
import { combinedInstructionBytes, revisionBytes } from '../../../core/registry/registry-accounting.js';

t.test('a revision is charged its captured, normalized and descriptor bytes', async (t) => {
  t.equal(revisionBytes({ capturedBytes: 10, normalizedBytes: 7, descriptorBytes: 300 }), 317);
});

t.test('combined instructions count one newline between each text', async (t) => {
  t.equal(combinedInstructionBytes([]), 0);
  t.equal(combinedInstructionBytes([5]), 5);
  t.equal(combinedInstructionBytes([5, 3]), 9);
  t.equal(combinedInstructionBytes([1, 1, 1]), 5);
  t.equal(combinedInstructionBytes(new Set([8_191, 8_192])), 16_384);
});
