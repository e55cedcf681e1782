// #[retry(max = 3)]
// async fn fetch(url: &str) -> std::io::Result<String> { get(url).await }

async fn fetch(url: &str) -> std::io::Result<String> {
    use ::reattempt::__private as __retry_private;
    static __RETRY_SITE: __retry_private::Site = __retry_private::Site::new(
        ::core::concat!(::core::module_path!(), "::fetch"),
    );
    static __RETRY_POLICY: __retry_private::Policy<__retry_private::Exponential> = __retry_private::Policy::new(
            __retry_private::Exponential::DEFAULT,
        )
        .max_attempts(3u32);
    let mut __retry_call = __retry_private::Call::new(
        (&__RETRY_POLICY),
        &__RETRY_SITE,
        __retry_private::async_clock(),
    );
    loop {
        let __retry_delay = {
            let __retry_out = __retry_call
                .next(
                    __retry_private::fallible_attempt::<
                        std::io::Result<String>,
                        _,
                    >(async { get(url).await }),
                )
                .await;
            match (__retry_call)
                .decide(
                    (&__RETRY_POLICY),
                    &__retry_out,
                    __retry_private::classify_by_type,
                    __retry_private::ErrorProbe::<std::io::Result<String>>::new()
                        .__retry_describer(),
                    __retry_private::ValueProbe::<std::io::Result<String>>::new()
                        .__retry_judge(),
                    __retry_private::NoFields,
                )
            {
                __retry_private::Decision::Retry(__retry_delay) => __retry_delay,
                _ => return __retry_out,
            }
        };
        __retry_call.wait_next(__retry_delay);
    }
}
