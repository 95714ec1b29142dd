//! Server-sent events, as a streamed answer comes.

/// Server-sent events: the `data` of each event, as its lines come in.
#[derive(Default)]
pub(super) struct SseParser {
    buffer: Vec<u8>,
    data: Option<String>,
}

impl SseParser {
    /// Takes in bytes; returns the data of the events they complete.
    pub(super) fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.buffer.extend_from_slice(bytes);
        let mut events = Vec::new();
        let mut start = 0;
        while let Some(length) = self.buffer[start..].iter().position(|&byte| byte == b'\n') {
            let line = String::from_utf8_lossy(&self.buffer[start..start + length]).into_owned();
            self.line(line.strip_suffix('\r').unwrap_or(&line), &mut events);
            start += length + 1;
        }
        self.buffer.drain(..start);
        events
    }

    /// The end of the stream: what is left, as if a blank line followed.
    pub(super) fn finish(&mut self) -> Vec<String> {
        let mut events = Vec::new();
        if !self.buffer.is_empty() {
            let line = String::from_utf8_lossy(&self.buffer).into_owned();
            self.buffer.clear();
            self.line(line.strip_suffix('\r').unwrap_or(&line), &mut events);
        }
        self.line("", &mut events);
        events
    }

    fn line(&mut self, line: &str, events: &mut Vec<String>) {
        if line.is_empty() {
            events.extend(self.data.take());
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        if field == "data" {
            match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sse_across_chunks() {
        let mut parser = SseParser::default();
        assert!(parser.push(b"data: {\"a\"").is_empty());
        assert_eq!(
            parser.push(b":1}\r\n\r\n: keep-alive\n\nevent: x\ndata: one\ndata: two\n\ndata: [DO"),
            ["{\"a\":1}", "one\ntwo"]
        );
        assert_eq!(parser.push("NE]\n\ndata: é".as_bytes()), ["[DONE]"]);
        assert_eq!(parser.finish(), ["é"]);
    }
}
