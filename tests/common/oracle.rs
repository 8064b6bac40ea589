//! The properties every pipeline run must have, whatever its input: an oracle over the
//! events alone, shared by the tests (`tests/hostile.rs`, `tests/properties.rs`) and the
//! fuzz targets (`fuzz/src/lib.rs` includes this file).
//!
//! - **Accounting**: every call the provider started (a `CallStarted`) ends in calls,
//!   duplicates or one failure, never in nothing and never in two failures; nothing is
//!   reported for a call that was not started, except the one failure for the calls past
//!   the limit and Gemini's `MALFORMED_FUNCTION_CALL`; no call follows its own failure.
//! - **No call without a name**, and every call's arguments are one JSON object.
//! - **A duplicate is one**: an object dropped as a duplicate equals, as a JSON value
//!   (serde_json the reference), an object of the same call that was delivered.
//! - **The end tells the truth**: `End` comes once, last; it is not `complete` when bytes
//!   were dropped or a call was interrupted.

use toolstream::assemble::{Event, FailureKind};

/// Check the properties; the first one broken, said in words.
pub fn check_events(events: &[Event]) -> Result<(), String> {
    use std::collections::HashMap;
    #[derive(Default)]
    struct Seen {
        calls: usize,
        failures: usize,
        duplicates: usize,
    }
    let mut started: HashMap<u32, Seen> = HashMap::new();
    // The delivered objects of each call, as values (those serde_json reads).
    let mut kept: HashMap<u32, Vec<serde_json::Value>> = HashMap::new();
    let mut unstarted_limit = 0;
    let mut lost = false;
    for (k, e) in events.iter().enumerate() {
        match e {
            Event::CallStarted { index, .. }
                if started.insert(*index, Seen::default()).is_some() =>
            {
                return Err(format!("call {index} started twice"));
            }
            Event::ToolCall(c) => {
                let Some(s) = started.get_mut(&c.index) else {
                    return Err(format!("call {} was never started", c.index));
                };
                if s.failures > 0 {
                    return Err(format!("call {} came after its failure", c.index));
                }
                s.calls += 1;
                if c.name.is_empty() {
                    return Err(format!("call {} has no name", c.index));
                }
                match serde_json::from_slice::<serde_json::Value>(&c.arguments) {
                    Ok(v @ serde_json::Value::Object(_)) => {
                        kept.entry(c.index).or_default().push(v)
                    }
                    // Numbers out of a float's range, nesting past serde_json's depth: the
                    // splitter's strictness is RFC 8259's, serde_json's is narrower.
                    Err(e) if matches!(e.classify(), serde_json::error::Category::Syntax) => {}
                    _ => return Err(format!("call {} arguments are not one object", c.index)),
                }
            }
            Event::Duplicate {
                index, arguments, ..
            } => {
                match started.get_mut(index) {
                    Some(s) => s.duplicates += 1,
                    None => return Err(format!("duplicate of call {index}, never started")),
                }
                if let Ok(v) = serde_json::from_slice::<serde_json::Value>(arguments) {
                    if !kept.get(index).is_some_and(|k| k.contains(&v)) {
                        return Err(format!(
                            "call {index}: {} dropped as a duplicate of nothing delivered",
                            String::from_utf8_lossy(arguments)
                        ));
                    }
                }
            }
            Event::ToolCallFailed(f) => {
                if f.kind == FailureKind::Interrupted {
                    lost = true;
                }
                match started.get_mut(&f.index) {
                    Some(s) => {
                        s.failures += 1;
                        if s.failures > 1 {
                            return Err(format!("call {} failed twice", f.index));
                        }
                    }
                    None if f.message.contains("MALFORMED_FUNCTION_CALL") => {}
                    None if f.kind == FailureKind::Limit => {
                        unstarted_limit += 1;
                        if unstarted_limit > 1 {
                            return Err("the calls past the limit failed twice".into());
                        }
                    }
                    None => return Err(format!("failure of call {}, never started", f.index)),
                }
            }
            Event::Dropped(_) => lost = true,
            Event::End { complete } => {
                if k + 1 != events.len() {
                    return Err("End is not the last event".into());
                }
                if *complete && lost {
                    return Err("complete although bytes were lost".into());
                }
            }
            _ => {}
        }
    }
    if !matches!(events.last(), Some(Event::End { .. })) {
        return Err("no End".into());
    }
    for (index, s) in &started {
        if s.calls + s.duplicates + s.failures == 0 {
            return Err(format!("call {index} ended in nothing"));
        }
    }
    Ok(())
}
