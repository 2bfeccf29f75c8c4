//! Asking the user a question through the client (MCP elicitation), for a
//! tool that would otherwise refuse (docs/security.md, "Asking the user").
//!
//! The two protocol eras ask differently:
//! - up to 2025-11-25 the server sends `elicitation/create` while the call
//!   is open and waits for the answer ([`Asker::peer`]);
//! - from 2026-07-28 the server may not send requests, so the call answers
//!   with an `input_required` result that carries the question and an
//!   opaque `requestState`; the client asks the user and sends the call
//!   again with the answer and that state ([`Asker::rounds`]). The state is
//!   a key into [`Pending`], this server's memory of the questions it asked:
//!   an answer counts only for the question it was given to, once, within
//!   the call's time limit.
//!
//! A client that did not declare the elicitation capability is never asked.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    ClientResult, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequests, InputRequiredResult, InputResponses,
    ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleServer, ServiceError};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// The key of our one question in `inputRequests` and `inputResponses`.
const INPUT_KEY: &str = "rootbound_approval";

/// Questions asked in rounds and not yet answered, at most; the oldest is
/// forgotten first (its answer, should it come, is asked again).
const MAX_PENDING: usize = 64;

/// Questions open at once in a session that asks by request: each holds
/// one of the transport's slots for requests in flight while it waits, so
/// unanswered questions must not take them all.
pub const MAX_OPEN_QUESTIONS: usize = 4;

/// What a call says when [`MAX_OPEN_QUESTIONS`] are open.
pub const BUSY: &str = "Other questions to the user are still open, so this one was not asked; \
     nothing ran. Wait for the user to answer them, then try again.";

/// A question with a fixed set of answers.
#[derive(Debug, Clone)]
pub struct Question {
    /// The text the user reads. It names the tool and shows all that an
    /// approval would let happen, so an answer given in a later round
    /// counts only for a call that would ask exactly this text.
    pub message: String,
    /// The choices: the value returned, and the title the user sees.
    pub choices: Vec<(&'static str, &'static str)>,
    /// How long the user has to answer.
    pub wait: Duration,
}

/// What came of a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The user picked this choice's value.
    Chose(String),
    /// The user said no (or accepted with a value not offered).
    Declined,
    /// The user closed the question without an answer, or the call was
    /// cancelled while it was open.
    Dismissed,
    /// No answer within the time limit (this long).
    TimedOut(Duration),
    /// Too many questions are open; this one was not asked.
    Busy,
    /// The client could not ask (it answered the request with an error).
    Failed(String),
    /// The question goes to the client in this call's result
    /// (`input_required`); the call ends now and comes back with the answer.
    Deferred,
}

/// Why the user cannot be asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cannot {
    /// The client did not declare the elicitation capability (form mode).
    NoCapability,
    /// `--bash-ask off`, or a call outside a session.
    TurnedOff,
}

/// How this call may ask the user.
#[derive(Clone)]
pub struct Asker {
    via: Via,
}

#[derive(Clone)]
enum Via {
    Cannot(Cannot),
    Peer(Peer<RoleServer>, Arc<Pending>),
    Rounds(Arc<Rounds>),
}

/// A call in the 2026-07-28 era: the answers it brought, and the slot for
/// the question it sends back.
struct Rounds {
    pending: Arc<Pending>,
    state: Option<String>,
    responses: Option<InputResponses>,
    deferred: Mutex<Option<InputRequiredResult>>,
}

impl Asker {
    /// A call that cannot ask.
    pub fn cannot(why: Cannot) -> Asker {
        Asker {
            via: Via::Cannot(why),
        }
    }

    /// A call in a session that sends `elicitation/create` requests;
    /// `pending` counts the questions open.
    pub fn peer(peer: Peer<RoleServer>, pending: Arc<Pending>) -> Asker {
        Asker {
            via: Via::Peer(peer, pending),
        }
    }

    /// A call in the 2026-07-28 era, with the `inputResponses` and
    /// `requestState` it carried.
    pub fn rounds(
        pending: Arc<Pending>,
        responses: Option<InputResponses>,
        state: Option<String>,
    ) -> Asker {
        Asker {
            via: Via::Rounds(Arc::new(Rounds {
                pending,
                state,
                responses,
                deferred: Mutex::new(None),
            })),
        }
    }

    /// Why this call cannot ask, if it cannot.
    pub fn cannot_ask(&self) -> Option<Cannot> {
        match self.via {
            Via::Cannot(why) => Some(why),
            _ => None,
        }
    }

    /// The question this call sends back to the client instead of a result.
    pub fn deferred(&self) -> Option<InputRequiredResult> {
        match &self.via {
            Via::Rounds(rounds) => rounds
                .deferred
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take(),
            _ => None,
        }
    }

    /// Asks `question`, or finds its answer among those the call brought.
    pub async fn ask(&self, question: &Question, cancel: &CancellationToken) -> Answer {
        match &self.via {
            Via::Cannot(_) => Answer::Failed("the client cannot be asked".into()),
            Via::Peer(peer, pending) => {
                let Some(_open) = pending.open() else {
                    return Answer::Busy;
                };
                ask_peer(peer, question, cancel).await
            }
            Via::Rounds(rounds) => rounds.ask(question),
        }
    }
}

async fn ask_peer(
    peer: &Peer<RoleServer>,
    question: &Question,
    cancel: &CancellationToken,
) -> Answer {
    let request = ServerRequest::ElicitRequest(ElicitRequest::new(params(question)));
    let options = PeerRequestOptions::with_timeout(question.wait);
    let handle = match peer.send_request_with_option(request, options).await {
        Ok(handle) => handle,
        Err(e) => return Answer::Failed(e.to_string()),
    };
    let id = handle.id.clone();
    let response = tokio::select! {
        response = handle.await_response() => response,
        () = cancel.cancelled() => {
            // The question is no longer wanted: the client may close it.
            let _ = peer
                .notify_cancelled(rmcp::model::CancelledNotificationParam::new(
                    Some(id),
                    Some("the tool call was cancelled".into()),
                ))
                .await;
            return Answer::Dismissed;
        }
    };
    match response {
        Ok(ClientResult::ElicitResult(result)) => read_result(&result, question),
        Ok(_) => Answer::Failed("the client answered with something else".into()),
        Err(ServiceError::Timeout { timeout }) => Answer::TimedOut(timeout),
        Err(e) => Answer::Failed(e.to_string()),
    }
}

impl Rounds {
    fn ask(&self, question: &Question) -> Answer {
        if let Some(state) = &self.state
            && let Some(asked) = self.pending.take(state)
            && asked.message == question.message
        {
            if asked.at.elapsed() > asked.wait {
                return Answer::TimedOut(asked.wait);
            }
            let Some(response) = self.responses.as_ref().and_then(|r| r.get(INPUT_KEY)) else {
                return Answer::Dismissed;
            };
            return match serde_json::from_value::<ElicitResult>(response.clone()) {
                Ok(result) => read_result(&result, question),
                Err(e) => Answer::Failed(format!("the answer could not be read: {e}")),
            };
        }
        // No answer to this question: ask it.
        let state = self.pending.add(&question.message, question.wait);
        let mut requests = InputRequests::new();
        requests.insert(
            INPUT_KEY.to_string(),
            InputRequest::Elicitation(ElicitRequest::new(params(question))),
        );
        *self.deferred.lock().unwrap_or_else(|p| p.into_inner()) =
            Some(InputRequiredResult::new(Some(requests), Some(state)));
        Answer::Deferred
    }
}

/// An accepted answer names one of the choices, or it is a refusal.
fn read_result(result: &ElicitResult, question: &Question) -> Answer {
    match result.action {
        ElicitationAction::Accept => {
            let chose = result
                .content
                .as_ref()
                .and_then(|c| c.get("decision"))
                .and_then(|d| d.as_str());
            match chose {
                Some(value) if question.choices.iter().any(|(v, _)| *v == value) => {
                    Answer::Chose(value.to_string())
                }
                _ => Answer::Declined,
            }
        }
        ElicitationAction::Cancel => Answer::Dismissed,
        // Decline, and any action a later protocol adds.
        _ => Answer::Declined,
    }
}

/// The form: one required choice among the question's.
fn params(question: &Question) -> ElicitRequestParams {
    let one_of: Vec<_> = question
        .choices
        .iter()
        .map(|(value, title)| json!({"const": value, "title": title}))
        .collect();
    let schema = json!({
        "type": "object",
        "properties": {"decision": {"type": "string", "title": "Decision", "oneOf": one_of}},
        "required": ["decision"],
    });
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question.message.clone(),
        requested_schema: serde_json::from_value::<ElicitationSchema>(schema)
            .expect("the schema is fixed and valid"),
    }
}

/// Questions this server asked in rounds, by the state it gave the client.
#[derive(Debug, Default)]
pub struct Pending {
    asked: Mutex<HashMap<String, Asked>>,
    counter: std::sync::atomic::AtomicU64,
    /// Questions open now, asked by request.
    open: std::sync::atomic::AtomicUsize,
}

/// One open question, counted until dropped.
struct Open<'a>(&'a std::sync::atomic::AtomicUsize);

impl Drop for Open<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[derive(Debug, Clone)]
struct Asked {
    message: String,
    at: Instant,
    wait: Duration,
}

impl Pending {
    /// Counts a question open, unless [`MAX_OPEN_QUESTIONS`] already are.
    fn open(&self) -> Option<Open<'_>> {
        use std::sync::atomic::Ordering;
        self.open
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < MAX_OPEN_QUESTIONS).then_some(n + 1)
            })
            .ok()
            .map(|_| Open(&self.open))
    }

    /// Remembers a question; returns the state that names it. The state is
    /// unpredictable (two keyed hashes of a counter, the keys random per
    /// process) so that an answer cannot be made up for a question not
    /// yet asked; it is used once.
    fn add(&self, message: &str, wait: Duration) -> String {
        let n = self
            .counter
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let keys = std::collections::hash_map::RandomState::new();
        let state = format!(
            "{:016x}{:016x}",
            keys.hash_one((n, 1u8)),
            keys.hash_one((n, 2u8))
        );
        let mut asked = self.asked.lock().unwrap_or_else(|p| p.into_inner());
        asked.retain(|_, a| a.at.elapsed() <= a.wait);
        if asked.len() >= MAX_PENDING
            && let Some(oldest) = asked
                .iter()
                .min_by_key(|(_, a)| a.at)
                .map(|(k, _)| k.clone())
        {
            asked.remove(&oldest);
        }
        asked.insert(
            state.clone(),
            Asked {
                message: message.to_string(),
                at: Instant::now(),
                wait,
            },
        );
        state
    }

    /// The question `state` names, forgotten as it is returned.
    fn take(&self, state: &str) -> Option<Asked> {
        self.asked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(about: &str) -> Question {
        Question {
            message: format!("Run {about}?"),
            choices: vec![("once", "Once"), ("no", "No")],
            wait: Duration::from_secs(60),
        }
    }

    fn answer(action: &str, decision: Option<&str>) -> InputResponses {
        let mut result = json!({"action": action});
        if let Some(d) = decision {
            result["content"] = json!({"decision": d});
        }
        InputResponses::from([(INPUT_KEY.to_string(), result)])
    }

    #[test]
    fn a_question_in_rounds_is_deferred_then_answered_once() {
        let pending = Arc::new(Pending::default());
        let first = Asker::rounds(pending.clone(), None, None);
        assert_eq!(first.via_rounds().ask(&question("a")), Answer::Deferred);
        let sent = first.deferred().expect("a question goes back");
        let state = sent.request_state.clone().unwrap();
        let requests = serde_json::to_value(&sent).unwrap();
        assert_eq!(
            requests["inputRequests"][INPUT_KEY]["method"],
            "elicitation/create"
        );
        let again = Asker::rounds(
            pending.clone(),
            Some(answer("accept", Some("once"))),
            Some(state.clone()),
        );
        assert_eq!(
            again.via_rounds().ask(&question("a")),
            Answer::Chose("once".into())
        );
        // The same state does not answer twice: the question is asked anew.
        let replayed = Asker::rounds(pending, Some(answer("accept", Some("once"))), Some(state));
        assert_eq!(replayed.via_rounds().ask(&question("a")), Answer::Deferred);
    }

    #[test]
    fn an_answer_counts_only_for_its_question_and_its_choices() {
        let pending = Arc::new(Pending::default());
        let first = Asker::rounds(pending.clone(), None, None);
        first.via_rounds().ask(&question("a"));
        let state = first.deferred().unwrap().request_state.unwrap();
        let other = Asker::rounds(
            pending.clone(),
            Some(answer("accept", Some("once"))),
            Some(state),
        );
        assert_eq!(other.via_rounds().ask(&question("b")), Answer::Deferred);
        let made_up = Asker::rounds(
            pending.clone(),
            Some(answer("accept", Some("once"))),
            Some("0123".into()),
        );
        assert_eq!(made_up.via_rounds().ask(&question("b")), Answer::Deferred);
        for (action, decision, want) in [
            ("accept", Some("always"), Answer::Declined),
            ("accept", None, Answer::Declined),
            ("decline", None, Answer::Declined),
            ("cancel", None, Answer::Dismissed),
        ] {
            let first = Asker::rounds(pending.clone(), None, None);
            first.via_rounds().ask(&question("c"));
            let state = first.deferred().unwrap().request_state.unwrap();
            let again = Asker::rounds(pending.clone(), Some(answer(action, decision)), Some(state));
            assert_eq!(again.via_rounds().ask(&question("c")), want, "{action}");
        }
    }

    #[test]
    fn only_a_few_questions_are_open_at_once() {
        let pending = Pending::default();
        let open: Vec<_> = (0..MAX_OPEN_QUESTIONS).map(|_| pending.open()).collect();
        assert!(open.iter().all(Option::is_some));
        assert!(pending.open().is_none());
        drop(open);
        assert!(pending.open().is_some());
    }

    #[test]
    fn a_late_answer_is_a_timeout() {
        let pending = Arc::new(Pending::default());
        let mut q = question("a");
        q.wait = Duration::from_millis(1);
        let first = Asker::rounds(pending.clone(), None, None);
        first.via_rounds().ask(&q);
        let state = first.deferred().unwrap().request_state.unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let again = Asker::rounds(pending, Some(answer("accept", Some("once"))), Some(state));
        assert_eq!(
            again.via_rounds().ask(&q),
            Answer::TimedOut(Duration::from_millis(1))
        );
    }

    impl Asker {
        fn via_rounds(&self) -> &Rounds {
            match &self.via {
                Via::Rounds(r) => r,
                _ => unreachable!(),
            }
        }
    }
}
