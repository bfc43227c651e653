/**
 * The system's own secrets, which no tool may read: a daemon run as root could (uid 0 owns them, so no
 * capability is needed). The sandbox covers those that exist; the file tools refuse them in a workspace
 * that holds them.
 */

/** The system's secrets: password hashes, host and TLS private keys, stored network and cluster credentials. */
export const SYSTEM_SECRETS: readonly string[] = [
  '/etc/shadow',
  '/etc/shadow-',
  '/etc/gshadow',
  '/etc/gshadow-',
  '/etc/security/opasswd',
  '/etc/ssl/private',
  '/etc/pki/tls/private',
  '/etc/pki/CA/private',
  '/etc/letsencrypt/archive',
  '/etc/letsencrypt/live',
  '/etc/krb5.keytab',
  '/etc/NetworkManager/system-connections',
  '/etc/wpa_supplicant',
  '/etc/ipsec.secrets',
  '/etc/ppp/chap-secrets',
  '/etc/ppp/pap-secrets',
  '/etc/kubernetes/admin.conf',
  '/etc/kubernetes/pki',
  '/etc/rancher/k3s/k3s.yaml',
];

/** The folder of the SSH host keys: its `ssh_host_*_key` files are private keys (the `.pub` ones are not). */
export const SSH_CONFIG = '/etc/ssh';
export const SSH_HOST_KEY = /^ssh_host_.*_key$/;
