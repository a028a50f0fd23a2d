/*
 * vendor_dnn - NVIDIA's real libcudnn (the libcudnn.so.9 shim and its
 * sub-libraries): tensor, filter and convolution descriptors with known
 * dims (host objects: set without a GPU), then the three convolutions and
 * cudnnBackendExecute on a NULL handle (each fails its checks, but the
 * entry points run). Built by tests/integ/record_libs_dnn.sh.
 */
#include <cudnn.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	static float buf[1 << 12];
	cudnnTensorDescriptor_t x, y, x5;
	cudnnFilterDescriptor_t w;
	cudnnConvolutionDescriptor_t conv, conv2;
	int dims[4] = { 8, 64, 28, 28 }, strides[4] = { 64 * 28 * 28, 28 * 28, 28, 1 };
	int pad[2] = { 2, 2 }, str[2] = { 1, 1 }, dil[2] = { 1, 1 };
	float one = 1.0f, zero = 0.0f;
	int rx, ry, rw, rcv, rnd, rcv2, rf, rbd, rbf, rex;

	cudnnCreateTensorDescriptor(&x);
	cudnnCreateTensorDescriptor(&y);
	cudnnCreateTensorDescriptor(&x5);
	cudnnCreateFilterDescriptor(&w);
	cudnnCreateConvolutionDescriptor(&conv);
	cudnnCreateConvolutionDescriptor(&conv2);
	/* x [32,3,224,224], w [64,3,7,7], pad 3, stride 2: y [32,64,112,112] */
	rx = cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_HALF, 32, 3, 224, 224);
	rw = cudnnSetFilter4dDescriptor(w, CUDNN_DATA_HALF, CUDNN_TENSOR_NCHW, 64, 3, 7, 7);
	rcv = cudnnSetConvolution2dDescriptor(conv, 3, 3, 2, 2, 1, 1, CUDNN_CROSS_CORRELATION,
					      CUDNN_DATA_FLOAT);
	ry = cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_HALF, 32, 64, 112, 112);
	rnd = cudnnSetTensorNdDescriptor(x5, CUDNN_DATA_FLOAT, 4, dims, strides);
	rcv2 = cudnnSetConvolutionNdDescriptor(conv2, 2, pad, str, dil, CUDNN_CONVOLUTION, CUDNN_DATA_FLOAT);
	rf = cudnnConvolutionForward(NULL, &one, x, buf, w, buf, conv, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
				     NULL, 0, &zero, y, buf);
	rbd = cudnnConvolutionBackwardData(NULL, &one, w, buf, y, buf, conv, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1,
					   NULL, 0, &zero, x, buf);
	rbf = cudnnConvolutionBackwardFilter(NULL, &one, x5, buf, x5, buf, conv2,
					     CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, NULL, 0, &zero, w, buf);
	rex = cudnnBackendExecute(NULL, (cudnnBackendDescriptor_t)0x5150, NULL);
	printf("produced tensor_x=%d filter=%d conv=%d tensor_y=%d tensor_nd=%d conv_nd=%d fwd=%d bwd_data=%d "
	       "bwd_filter=%d exec=%d pid=%d\n", rx, rw, rcv, ry, rnd, rcv2, rf, rbd, rbf, rex, getpid());
	fflush(stdout);
	usleep(300000);
	return 0;
}
