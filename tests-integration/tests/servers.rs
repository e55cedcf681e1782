//! The tests against real servers never pass without running under CI, and
//! say when they skip elsewhere.

mod common;

use common::server_address;

#[test]
fn a_set_variable_gives_the_address() {
    assert_eq!(
        server_address("RETRY_TEST_X_URL", Some("redis://127.0.0.1:1".into()), true),
        Ok(Some("redis://127.0.0.1:1".into()))
    );
}

#[test]
fn a_missing_server_fails_under_ci_with_a_message_naming_the_variable() {
    for value in [None, Some(String::new())] {
        let error = server_address("RETRY_TEST_X_URL", value, true).unwrap_err();
        assert!(
            error.contains("RETRY_TEST_X_URL is not set under CI"),
            "{error}"
        );
    }
}

#[test]
fn a_missing_server_is_a_skip_on_a_laptop() {
    assert_eq!(server_address("RETRY_TEST_X_URL", None, false), Ok(None));
}
