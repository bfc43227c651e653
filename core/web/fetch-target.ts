import { isIP } from 'node:net';
import { type WebFetchError, type WebFetchFailure, webFetchFailure } from './web-fetch-error.js';
import { WEB_FETCH_LIMITS } from './web-fetch-limits.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export type Lookup = (hostname: string) => Promise<ResolvedAddress[]>;

/** A URL that may be fetched and the checked addresses its host resolved to, the only ones connected to. */
export interface FetchTarget {
  url: URL;
  /** The host without the brackets of an IPv6 literal. */
  host: string;
  addresses: ResolvedAddress[];
}

export interface TargetPolicy {
  lookup: Lookup;
  /** Whether an address may be connected to. */
  isAllowedAddress: (address: string) => boolean;
}

/** The URL parsed and checked: length, scheme and credentials, in that order. */
export function checkUrl(text: string): URL | WebFetchError {
  if (text.length > WEB_FETCH_LIMITS.url_chars) return 'invalid_url';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'invalid_url';
  }
  if (url.href.length > WEB_FETCH_LIMITS.url_chars) return 'invalid_url';
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'scheme_not_allowed';
  if (url.username !== '' || url.password !== '') return 'credentials_in_url';
  return url;
}

/**
 * Resolves the host of a checked URL once, all its addresses, and refuses it unless every one is allowed.
 * A literal IP host is its own single address.
 */
export async function resolveTarget(url: URL, policy: TargetPolicy): Promise<FetchTarget | WebFetchFailure> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: ResolvedAddress[];
  const literal = isIP(host);
  if (literal !== 0) {
    addresses = [{ address: host, family: literal === 4 ? 4 : 6 }];
  } else {
    try {
      addresses = await policy.lookup(host);
    } catch {
      return webFetchFailure('unresolvable');
    }
    if (addresses.length === 0 || addresses.some(({ address }) => isIP(address) === 0)) {
      return webFetchFailure('unresolvable');
    }
  }
  if (!addresses.every(({ address }) => policy.isAllowedAddress(address))) {
    return webFetchFailure('address_not_allowed');
  }
  return { url, host, addresses };
}
