import { join } from 'node:path';
import { CREDENTIAL_PATTERNS } from './credential-rules.js';

/**
 * Places under a home directory that hold credentials, tokens, keyrings, browser sessions or typed
 * secrets but that the capture rules do not name literally (they match workspace components, some by
 * wildcard, which a fixed list of home paths cannot express).
 */
const HOME_CREDENTIAL_PATHS: readonly string[] = [
  '.docker',
  '.terraform.d',
  '.config/git/credentials',
  '.config/op',
  '.config/doctl',
  '.config/hcloud',
  '.config/rclone',
  '.config/helm',
  '.config/containers/auth.json',
  '.config/google-chrome',
  '.config/chromium',
  '.config/BraveSoftware',
  '.config/github-copilot',
  '.config/configstore',
  '.config/netlify',
  '.config/gcloud',
  '.mozilla',
  '.thunderbird',
  '.local/share/keyrings',
  '.local/share/kwalletd',
  '.local/share/com.vercel.cli',
  '.pki',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.gem/credentials',
  '.m2/settings.xml',
  '.m2/settings-security.xml',
  '.gradle/gradle.properties',
  '.nuget/NuGet/NuGet.Config',
  '.composer/auth.json',
  '.config/composer/auth.json',
  '.pulumi/credentials.json',
  '.fly',
  '.huggingface',
  '.cache/huggingface/token',
  '.cache/huggingface/stored_tokens',
  '.kaggle',
  '.claude/.credentials.json',
  '.claude.json',
  '.codex/auth.json',
  '.gemini',
  '.wakatime.cfg',
  '.ipython',
  '.bash_history',
  '.zsh_history',
  '.sh_history',
  '.history',
  '.python_history',
  '.node_repl_history',
  '.psql_history',
  '.mysql_history',
  '.sqlite_history',
  '.rediscli_history',
  '.irb_history',
  '.local/share/fish/fish_history',
];

/**
 * The credential folders and files of `userHome`: every literal capture rule taken as a path under the
 * home, and the home-only places above. Commands see an empty home, so these matter where a command can
 * still reach into the home: a workspace that is the home or holds it, and the readable folders.
 */
export function homeCredentialPaths(userHome: string): string[] {
  const relative = [
    ...CREDENTIAL_PATTERNS.filter((pattern) => !pattern.includes('*')),
    ...HOME_CREDENTIAL_PATHS,
  ];
  return [...new Set(relative)].map((path) => join(userHome, path));
}
