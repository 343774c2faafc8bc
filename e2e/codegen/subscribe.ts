// Live item events over graphql-ws (a WebSocket). Node 20 has no WebSocket
// of its own: the client is given ws's. The token goes in connectionParams,
// which the server reads from connection_init.
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { graphql } from './gql/index.js';
import type { ItemEventsSubscription } from './gql/graphql.js';

const ItemEvents = graphql(`
  subscription ItemEvents($after: ID) {
    itemEvents(after: $after) {
      id
      type
      item {
        id
        name
      }
    }
  }
`);

// SubscriptionError is a subscription the server refused or ended: code is
// the socket's close code (4403: the token is missing, refused or was
// revoked; 4400: a bad message; 4408: no connection_init in time) or a
// GraphQL error's extensions.code.
export class SubscriptionError extends Error {
  constructor(
    message: string,
    readonly code: number | string | undefined,
  ) {
    super(message);
    this.name = 'SubscriptionError';
  }
}

// closeCode is the code of what graphql-ws throws when the socket closes:
// a CloseEvent, not an Error.
function closeCode(e: unknown): number | undefined {
  const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  return typeof code === 'number' ? code : undefined;
}

// follow prints item events as they come until it has printed count of
// them, and fails if the stream ends first. after (an event id, evt_…) resumes: every later event comes first,
// then live ones; without it, live events only. A subscription the server
// refuses or ends throws a SubscriptionError with its code.
export async function follow(base: string, token: string, count: number, after?: string): Promise<void> {
  const client = createClient({
    url: base.replace(/^http/, 'ws') + '/graphql',
    webSocketImpl: WebSocket,
    connectionParams: { Authorization: `Bearer ${token}` },
    // A close the server chose (4400-4499) says the same again on a retry
    // with the same token; a dropped connection is worth retrying.
    shouldRetry: (e) => {
      const code = closeCode(e);
      return code === undefined || code < 4400 || code >= 4500;
    },
  });
  try {
    let seen = 0;
    const events = client.iterate<ItemEventsSubscription>({ query: ItemEvents.toString(), variables: { after } });
    for await (const result of events) {
      if (result.errors?.length) {
        const err = result.errors[0];
        throw new SubscriptionError(err.message, err.extensions?.code as string | undefined);
      }
      const e = result.data?.itemEvents;
      if (!e) continue;
      const type: 'CREATED' | 'UPDATED' | 'DELETED' = e.type;
      console.log(e.id, type, e.item.id, e.item.name);
      if (++seen >= count) return;
    }
    throw new Error(`the stream ended after ${seen} of ${count} events`);
  } catch (e) {
    const code = closeCode(e);
    if (e instanceof Error || code === undefined) throw e;
    const reason = (e as { reason?: string }).reason;
    throw new SubscriptionError(`the server closed the subscription (${code}${reason ? `: ${reason}` : ''})`, code);
  } finally {
    await client.dispose();
  }
}
