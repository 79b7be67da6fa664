import { Alert, Button, Code, Group, ScrollArea, SegmentedControl, TextInput } from '@mantine/core';
import { useEffect, useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { readEventStream } from '../components/sse.ts';
import { API_BASE } from '../paths.ts';

interface LogLine {
  timestamp_ms: number;
  source: 'agent' | 'xray';
  line: string;
}

const KEEP = 2000;

/** The live tail of a node's engine or agent log (GET /nodes/{id}/logs/stream): pause, filter, download. */
export function NodeLogTail({ nodeId, online }: { nodeId: string; online: boolean }) {
  const { t } = useTranslation();
  const [source, setSource] = useState<'xray' | 'agent'>('xray');
  const [lines, setLines] = useState<LogLine[]>([]);
  const [paused, setPaused] = useState(false);
  const [filter, setFilter] = useState('');
  const [error, setError] = useState<string | null>(null);
  const pausedRef = useRef(paused);
  pausedRef.current = paused;
  const held = useRef<LogLine[]>([]);

  useEffect(() => {
    if (!online) return;
    const abort = new AbortController();
    setLines([]);
    setError(null);
    readEventStream(
      `${API_BASE}/nodes/${encodeURIComponent(nodeId)}/logs/stream?source=${source}`,
      (e) => {
        if (e.event !== 'log') return;
        const batch = JSON.parse(e.data) as LogLine[];
        if (pausedRef.current) {
          held.current.push(...batch);
          return;
        }
        setLines((prev) => [...prev, ...batch].slice(-KEEP));
      },
      abort.signal,
    ).catch((err: Error) => {
      if (!abort.signal.aborted) setError(err.message);
    });
    return () => abort.abort();
  }, [nodeId, source, online]);

  const resume = () => {
    setPaused(false);
    const more = held.current;
    held.current = [];
    setLines((prev) => [...prev, ...more].slice(-KEEP));
  };
  const shown = useMemo(() => {
    const f = filter.trim().toLowerCase();
    return f ? lines.filter((l) => l.line.toLowerCase().includes(f)) : lines;
  }, [lines, filter]);
  const download = () => {
    const text = lines.map((l) => `${new Date(l.timestamp_ms).toISOString()} ${l.line}`).join('\n');
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `${nodeId}-${source}.log`;
    a.click();
    URL.revokeObjectURL(url);
  };

  if (!online) return <Alert color="gray">{t('nodeLogs.offline')}</Alert>;
  return (
    <>
      <Group mb="sm" gap="sm">
        <SegmentedControl
          aria-label={t('nodeLogs.source')}
          value={source}
          onChange={(v) => setSource(v as 'xray' | 'agent')}
          data={[
            { value: 'xray', label: t('nodeLogs.engine') },
            { value: 'agent', label: t('nodeLogs.agent') },
          ]}
        />
        <TextInput
          aria-label={t('nodeLogs.filter')}
          placeholder={t('nodeLogs.filter')}
          value={filter}
          onChange={(e) => setFilter(e.currentTarget.value)}
        />
        <Button variant="default" onClick={paused ? resume : () => setPaused(true)}>
          {paused ? t('nodeLogs.resume') : t('nodeLogs.pause')}
        </Button>
        <Button variant="default" onClick={download} disabled={lines.length === 0}>
          {t('nodeLogs.download')}
        </Button>
      </Group>
      {error && (
        <Alert color="red" mb="sm">
          {error}
        </Alert>
      )}
      {/* The viewport is what scrolls: it takes the focus (keyboard scrolling) and the name (axe: scrollable-region-focusable). */}
      <ScrollArea h={320} type="auto" viewportProps={{ tabIndex: 0, role: 'region', 'aria-label': t('nodeLogs.title') }}>
        <Code block dir="ltr" data-testid="log-lines">
          {shown.length === 0
            ? t('nodeLogs.waiting')
            : shown.map((l) => `${new Date(l.timestamp_ms).toLocaleTimeString()}  ${l.line}`).join('\n')}
        </Code>
      </ScrollArea>
    </>
  );
}
