import { type OpenedStream, openAgentStreams, type StreamAdmissionDeps, type StreamOpening } from '@svc/domain';
import { createTurnBatcher } from '@svc/runtime';

const MAX_BATCH = 250;

/**
 * Admits Sync streams (openAgentStreams), gathering the openings of one turn into one
 * statement, and those that arrive while two statements run into the next (issue 17.3: a
 * reconnecting fleet is admitted a few dozen at a time by the admission line; one transaction
 * per stream was most of the database's work in the storm). Resolves when the node's row says
 * this stream is its own; rejects with the refusal (UNAUTHENTICATED) for that stream alone.
 */
export function streamOpener(deps: StreamAdmissionDeps): (opening: StreamOpening) => Promise<OpenedStream> {
  const open = createTurnBatcher<StreamOpening, OpenedStream | Error>({
    maxBatch: MAX_BATCH,
    maxInFlight: 2,
    run: async (openings) => {
      const results = await openAgentStreams(deps, openings);
      const byOpening = new Map(openings.map((o, i) => [o, results[i] as OpenedStream | Error]));
      return (o) => byOpening.get(o) as OpenedStream | Error;
    },
  });
  return async (opening) => {
    const r = await open(opening);
    if (r instanceof Error) throw r;
    return r;
  };
}
