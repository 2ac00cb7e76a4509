pub fn metrics() {}
