//! CondIterator: either a rayon parallel iterator or a serial iterator, with the
//! same semantics as rayon-cond 0.3 for the methods tokenizers calls.
use either::Either;
use rayon::iter::{IntoParallelIterator, IterBridge, ParallelBridge, ParallelIterator, IndexedParallelIterator,
                  FromParallelIterator};
use rayon::iter as ri;
use std::iter as si;

pub enum CondIterator<P, S>
where
    P: ParallelIterator,
    S: Iterator<Item = P::Item>,
{
    Parallel(P),
    Serial(S),
}

impl<P, S> CondIterator<P, S>
where
    P: ParallelIterator,
    S: Iterator<Item = P::Item>,
{
    pub fn new<I>(iterable: I, parallel: bool) -> Self
    where
        I: IntoParallelIterator<Iter = P, Item = P::Item> + IntoIterator<IntoIter = S, Item = S::Item>,
    {
        if parallel { Self::from_parallel(iterable) } else { Self::from_serial(iterable) }
    }
    pub fn from_parallel<I>(iterable: I) -> Self
    where
        I: IntoParallelIterator<Iter = P, Item = P::Item>,
    {
        CondIterator::Parallel(iterable.into_par_iter())
    }
    pub fn from_serial<I>(iterable: I) -> Self
    where
        I: IntoIterator<IntoIter = S, Item = S::Item>,
    {
        CondIterator::Serial(iterable.into_iter())
    }
    pub fn is_parallel(&self) -> bool {
        matches!(self, CondIterator::Parallel(_))
    }
    pub fn is_serial(&self) -> bool {
        matches!(self, CondIterator::Serial(_))
    }
    pub fn into_parallel(self) -> Either<P, IterBridge<S>>
    where
        S: Send,
    {
        match self {
            CondIterator::Parallel(p) => Either::Left(p),
            CondIterator::Serial(s) => Either::Right(s.par_bridge()),
        }
    }
    pub fn map<F, R>(self, map_op: F) -> CondIterator<ri::Map<P, F>, si::Map<S, F>>
    where
        F: Fn(P::Item) -> R + Sync + Send,
        R: Send,
    {
        match self {
            CondIterator::Parallel(p) => CondIterator::Parallel(p.map(map_op)),
            CondIterator::Serial(s) => CondIterator::Serial(s.map(map_op)),
        }
    }
    pub fn flat_map<F, IOP>(self, map_op: F) -> CondIterator<ri::FlatMap<P, F>, si::FlatMap<S, IOP, F>>
    where
        F: Fn(P::Item) -> IOP + Sync + Send,
        IOP: IntoParallelIterator + IntoIterator<Item = <IOP as IntoParallelIterator>::Item>,
    {
        match self {
            CondIterator::Parallel(p) => CondIterator::Parallel(p.flat_map(map_op)),
            CondIterator::Serial(s) => CondIterator::Serial(s.flat_map(map_op)),
        }
    }
    pub fn filter<F>(self, filter_op: F) -> CondIterator<ri::Filter<P, F>, si::Filter<S, F>>
    where
        F: Fn(&P::Item) -> bool + Sync + Send,
    {
        match self {
            CondIterator::Parallel(p) => CondIterator::Parallel(p.filter(filter_op)),
            CondIterator::Serial(s) => CondIterator::Serial(s.filter(filter_op)),
        }
    }
    pub fn for_each<OP>(self, op: OP)
    where
        OP: Fn(P::Item) + Sync + Send,
    {
        match self {
            CondIterator::Parallel(p) => p.for_each(op),
            CondIterator::Serial(s) => s.for_each(op),
        }
    }
    pub fn reduce<OP, ID>(self, identity: ID, op: OP) -> P::Item
    where
        OP: Fn(P::Item, P::Item) -> P::Item + Sync + Send,
        ID: Fn() -> P::Item + Sync + Send,
    {
        match self {
            CondIterator::Parallel(p) => p.reduce(identity, op),
            CondIterator::Serial(s) => s.fold(identity(), op),
        }
    }
    pub fn collect<C>(self) -> C
    where
        C: FromParallelIterator<P::Item> + si::FromIterator<S::Item>,
    {
        match self {
            CondIterator::Parallel(p) => p.collect(),
            CondIterator::Serial(s) => s.collect(),
        }
    }
    pub fn sum<Sum>(self) -> Sum
    where
        Sum: Send + si::Sum<P::Item> + si::Sum<Sum>,
    {
        match self {
            CondIterator::Parallel(p) => p.sum(),
            CondIterator::Serial(s) => s.sum(),
        }
    }
    pub fn max(self) -> Option<P::Item>
    where
        P::Item: Ord,
    {
        match self {
            CondIterator::Parallel(p) => p.max(),
            CondIterator::Serial(s) => s.max(),
        }
    }
}

impl<P, S> CondIterator<P, S>
where
    P: IndexedParallelIterator,
    S: Iterator<Item = P::Item>,
{
    pub fn enumerate(self) -> CondIterator<ri::Enumerate<P>, si::Enumerate<S>> {
        match self {
            CondIterator::Parallel(p) => CondIterator::Parallel(p.enumerate()),
            CondIterator::Serial(s) => CondIterator::Serial(s.enumerate()),
        }
    }
}
