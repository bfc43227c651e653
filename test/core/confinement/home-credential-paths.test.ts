import t from 'tap';
import { homeCredentialPaths } from '../../../core/confinement/home-credential-paths.js';

t.test('the credential places of a home are listed under that home', async (t) => {
  const paths = homeCredentialPaths('/home/ada');
  for (const expected of [
    '.ssh',
    '.gnupg',
    '.aws',
    '.azure',
    '.config/gcloud',
    '.kube',
    '.docker',
    '.netrc',
    '.git-credentials',
    '.npmrc',
    '.pypirc',
    '.config/gh',
    '.password-store',
    '.local/share/keyrings',
    '.bash_history',
  ]) {
    t.ok(paths.includes(`/home/ada/${expected}`), expected);
  }
  t.ok(
    paths.every((path) => path.startsWith('/home/ada/')),
    'every path is inside the home',
  );
  t.notOk(
    paths.some((path) => path.includes('*')),
    'no pattern is passed on as a path',
  );
  t.equal(new Set(paths).size, paths.length, 'no path twice');
  t.notOk(paths.includes('/home/ada'), 'the home itself is not hidden');
});

t.test('a home given with a trailing slash yields the same paths', async (t) => {
  t.same(homeCredentialPaths('/home/ada/'), homeCredentialPaths('/home/ada'));
});
