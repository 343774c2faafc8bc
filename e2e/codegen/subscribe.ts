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

// follow prints item events as they come until it has printed count of
// them, and fails if the stream ends first. after (an event id, evt_…) resumes: every later event comes first,
// then live ones; without it, live events only.
export async function follow(base: string, token: string, count: number, after?: string): Promise<void> {
  const client = createClient({
    url: base.replace(/^http/, 'ws') + '/graphql',
    webSocketImpl: WebSocket,
    connectionParams: { Authorization: `Bearer ${token}` },
  });
  try {
    let seen = 0;
    const events = client.iterate<ItemEventsSubscription>({ query: ItemEvents.toString(), variables: { after } });
    for await (const result of events) {
      if (result.errors?.length) throw new Error(result.errors[0].message);
      const e = result.data?.itemEvents;
      if (!e) continue;
      const type: 'CREATED' | 'UPDATED' | 'DELETED' = e.type;
      console.log(e.id, type, e.item.id, e.item.name);
      if (++seen >= count) return;
    }
    throw new Error(`the stream ended after ${seen} of ${count} events`);
  } finally {
    await client.dispose();
  }
}
