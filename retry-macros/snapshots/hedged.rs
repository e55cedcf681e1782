// #[retry(max = 3, hedge = 50ms)]
// async fn fetch(url: &str) -> std::io::Result<String> { get(url).await }

async fn fetch(url: &str) -> std::io::Result<String> {
    use ::reattempt::__private as __retry_private;
    static __RETRY_SITE: __retry_private::Site = __retry_private::Site::new(
        ::core::concat!(::core::module_path!(), "::fetch"),
    );
    static __RETRY_LATENCIES: __retry_private::LatencySketch = __retry_private::LatencySketch::new();
    static __RETRY_POLICY: __retry_private::Policy<__retry_private::Exponential> = __retry_private::Policy::new(
            __retry_private::Exponential::DEFAULT,
        )
        .max_attempts(3u32)
        .hedge(
            __retry_private::Hedge::new(
                &__RETRY_LATENCIES,
                ::core::time::Duration::new(0u64, 50000000u32),
            ),
        );
    let mut __retry_call = __retry_private::Call::new(
        (&__RETRY_POLICY),
        &__RETRY_SITE,
        __retry_private::async_clock(),
    );
    let __retry_make = || __retry_private::fallible_attempt::<
        std::io::Result<String>,
        _,
    >(async { get(url).await });
    let __retry_attempts = __retry_private::Attempts::new(
        &__retry_make,
        __retry_private::timer,
        ::core::option::Option::None,
    );
    loop {
        let mut __retry_round = ::core::pin::pin!(
            __retry_private::Round::new(__retry_private::Slot::new(__retry_private::Slot::new(__retry_private::End)))
        );
        __retry_call.begin_round(__retry_round.as_mut(), &__retry_attempts);
        let __retry_delay = loop {
            match __retry_call
                .round_event(
                    __retry_round.as_mut(),
                    &__retry_attempts,
                    __retry_private::classify_by_type,
                    __retry_private::ErrorProbe::<std::io::Result<String>>::new()
                        .__retry_describer(),
                    __retry_private::ValueProbe::<std::io::Result<String>>::new()
                        .__retry_judge(),
                    __retry_private::NoFields,
                )
                .await
            {
                __retry_private::RoundEvent::Hedged(_) => {}
                __retry_private::RoundEvent::Beside(_, _) => {}
                __retry_private::RoundEvent::Ended(__retry_out, __retry_decision, _) => {
                    break {
                        match __retry_decision {
                            __retry_private::Decision::Return => return __retry_out,
                            __retry_private::Decision::GiveUp(_) => {
                                return __retry_out;
                            }
                            __retry_private::Decision::Retry(__retry_delay) => {
                                __retry_delay
                            }
                        }
                    };
                }
            }
        };
        __retry_private::wait(&mut __retry_call, __retry_delay).await;
    }
}
