//! The status codes the server answers with.

/// A response status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Ok,
    PartialContent,
    MovedPermanently,
    NotModified,
    BadRequest,
    PreconditionFailed,
    Forbidden,
    NotFound,
    MethodNotAllowed,
    UriTooLong,
    RangeNotSatisfiable,
    HeadersTooLarge,
    ExpectationFailed,
    PayloadTooLarge,
    InternalError,
    NotImplemented,
    BadGateway,
    ServiceUnavailable,
    GatewayTimeout,
    VersionNotSupported,
}

impl Status {
    pub(crate) fn code(self) -> u16 {
        match self {
            Status::Ok => 200,
            Status::PartialContent => 206,
            Status::MovedPermanently => 301,
            Status::NotModified => 304,
            Status::BadRequest => 400,
            Status::Forbidden => 403,
            Status::NotFound => 404,
            Status::MethodNotAllowed => 405,
            Status::PreconditionFailed => 412,
            Status::UriTooLong => 414,
            Status::RangeNotSatisfiable => 416,
            Status::HeadersTooLarge => 431,
            Status::ExpectationFailed => 417,
            Status::PayloadTooLarge => 413,
            Status::BadGateway => 502,
            Status::ServiceUnavailable => 503,
            Status::GatewayTimeout => 504,
            Status::InternalError => 500,
            Status::NotImplemented => 501,
            Status::VersionNotSupported => 505,
        }
    }

    pub(crate) fn reason(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::PartialContent => "Partial Content",
            Status::MovedPermanently => "Moved Permanently",
            Status::NotModified => "Not Modified",
            Status::BadRequest => "Bad Request",
            Status::Forbidden => "Forbidden",
            Status::NotFound => "Not Found",
            Status::MethodNotAllowed => "Method Not Allowed",
            Status::PreconditionFailed => "Precondition Failed",
            Status::UriTooLong => "URI Too Long",
            Status::RangeNotSatisfiable => "Range Not Satisfiable",
            Status::HeadersTooLarge => "Request Header Fields Too Large",
            Status::ExpectationFailed => "Expectation Failed",
            Status::PayloadTooLarge => "Content Too Large",
            Status::BadGateway => "Bad Gateway",
            Status::ServiceUnavailable => "Service Unavailable",
            Status::GatewayTimeout => "Gateway Timeout",
            Status::InternalError => "Internal Server Error",
            Status::NotImplemented => "Not Implemented",
            Status::VersionNotSupported => "HTTP Version Not Supported",
        }
    }

    /// Statuses after which the connection closes whatever the request
    /// asked (the request itself could not be trusted, or was not read).
    pub(crate) fn closes(self) -> bool {
        matches!(
            self,
            Status::BadRequest
                | Status::UriTooLong
                | Status::HeadersTooLarge
                | Status::ExpectationFailed
                | Status::PayloadTooLarge
                | Status::InternalError
                | Status::NotImplemented
                | Status::VersionNotSupported
        )
    }
}
