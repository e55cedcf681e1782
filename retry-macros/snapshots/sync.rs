// #[retry(max = 3)]
// fn fetch(url: &str) -> std::io::Result<String> { get(url) }

fn fetch(url: &str) -> std::io::Result<String> {
    use ::reattempt::__private as __retry_private;
    static __RETRY_SITE: __retry_private::Site = __retry_private::Site::new(
        ::core::concat!(::core::module_path!(), "::fetch"),
    );
    static __RETRY_POLICY: __retry_private::Policy<__retry_private::Exponential> = __retry_private::Policy::new(
            __retry_private::Exponential::DEFAULT,
        )
        .max_attempts(3u32);
    let __retry_body = move || -> std::io::Result<String> { get(url) };
    let __retry_out = __retry_private::run_sync(
        (&__RETRY_POLICY),
        &__RETRY_SITE,
        __retry_body,
        __retry_private::ValueProbe::<std::io::Result<String>>::new().__retry_judge(),
        &__retry_private::classify_by_type,
        __retry_private::ErrorProbe::<std::io::Result<String>>::new()
            .__retry_describer(),
        __retry_private::THREAD_WAITS,
    );
    __retry_private::assert_fallible(&__retry_out);
    __retry_out
}
