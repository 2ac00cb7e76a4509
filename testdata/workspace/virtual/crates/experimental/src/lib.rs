pub fn experiment() {}
